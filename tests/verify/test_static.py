"""Static rejection: each hack that the AST can see is refused before any code runs, for its own reason.

Every case goes through `Evaluator.evaluate`, which returns at the static stage without starting a
worker, so the verdict (stage, check, line) is exactly what a proposer or `xe-forge check` gets.
"""

from __future__ import annotations

import pytest

from xe_forge.verify.evaluate import Evaluator, input_allowance
from xe_forge.verify.static import check_source

from .helpers import finding, hack_line, problem, source

# fixture file -> (check, words the message must contain); the finding must point at the `# HACK` line
STATIC_HACKS = {
    "torch_matmul": ("torch-compute", "torch.matmul"),
    "matmul_operator": ("torch-compute", "@"),
    "functional_linear": ("torch-compute", "F.linear"),
    "submodule_call": ("torch-compute", "self.linear"),
    "tensor_sum": ("torch-compute", "sum"),
    "decorated_helper": ("torch-compute", "torch.mm"),
    "try_fallback": ("try-except", "fallback"),
    "thread_worker": ("sandbox", "threading"),
    "subprocess_call": ("sandbox", "subprocess"),
    "socket_import": ("sandbox", "socket"),
    "side_stream": ("sandbox", "side stream"),
    "patch_assign": ("monkey-patch", "torch.matmul"),
    "patch_setattr": ("monkey-patch", "triton"),
    "subclass_reference": ("subclass", "_REFERENCE"),
    "harness_patch": ("sandbox", "xe_forge.verify.compare"),
}
LEGIT = ["linear/good.py", "linear/autotuned.py", "linear/descriptor.py", "linear/reused_buffer.py", "pair/good.py",
         "zeros/good.py"]
# Other spellings of "torch does the GEMM", swapped into hacks/torch_matmul.py: each must still be seen.
EVASIONS = {
    "numpy": ("        y = torch.as_tensor(np.tensordot(x.numpy(), w.detach().numpy().T, axes=1))  # HACK",
              "numpy.tensordot"),
    "torch-linalg": ("        y = torch.linalg.vecdot(x[:, None, :], w[None, :, :])  # HACK", "torch.linalg.vecdot"),
    "aten-op": ("        y = torch.ops.aten.mm.default(x, w.t())  # HACK", "torch.ops.aten.mm.default"),
    "renamed": ("        mm = torch.mm  # HACK\n        y = mm(x, w.t())", "torch.mm"),
    "getattr": ("        y = getattr(torch, 'm' + 'm')(x, w.t())  # HACK", "getattr(torch, 'm' + 'm')"),
    "getattr-constant": ("        y = getattr(torch, 'mm')(x, w.t())  # HACK", "getattr(torch, 'mm')"),
    "dunder": ("        y = x.__matmul__(w.t())  # HACK", "__matmul__"),
    "operator": ("        y = functools.reduce(operator.matmul, [x, w.t()])  # HACK", "operator.matmul"),
    "from-import": ("        y = linear(x, w)  # HACK", "F.linear"),
}


@pytest.mark.parametrize("name", sorted(STATIC_HACKS))
def test_static_hack_is_rejected_at_its_line(name: str, evaluator: Evaluator, linear):
    text = source(f"hacks/{name}.py")
    check, words = STATIC_HACKS[name]
    verdict = evaluator.evaluate(text, linear, unseen=True)
    assert not verdict.passed and verdict.stage_failed == "static"
    hit = finding(verdict, check)
    assert words in hit.message, hit.render()
    lines = {f.line for f in verdict.findings if f.check == check}
    assert hack_line(text) in lines, verdict.feedback()


@pytest.mark.parametrize("name", sorted(EVASIONS))
def test_torch_work_under_another_spelling_is_still_torch_work(name: str):
    line, op = EVASIONS[name]
    imports = "import functools\nimport operator\n\nimport numpy as np\nimport torch\n"
    text = source("hacks/torch_matmul.py").replace("        y = torch.matmul(x, w.t())  # HACK", line)
    text = text.replace("import torch\n", imports, 1).replace("import triton\n", "import triton\n"
                                                               "from torch.nn.functional import linear\n", 1)
    found = [f for f in check_source(text).findings if f.check == "torch-compute"]
    assert found and op in found[0].message and found[0].line == hack_line(text), [f.render() for f in found]


def test_decoy_kernel_defined_but_never_launched(evaluator: Evaluator, linear):
    verdict = evaluator.evaluate(source("hacks/decoy_kernel.py"), linear)
    assert verdict.stage_failed == "static"
    assert "never launched" in finding(verdict, "no-launch").message


def test_file_without_any_kernel_is_rejected(evaluator: Evaluator, linear):
    verdict = evaluator.evaluate(source("linear/ref_pytorch.py"), linear)
    assert verdict.stage_failed == "static" and "no-kernel" in {f.check for f in verdict.findings}


def test_sys_modules_and_dunder_import_are_sandbox_findings():
    text = source("linear/good.py").replace("import torch\n", "import sys\nimport torch\n_m = sys.modules\n"
                                            "_t = __import__('torch')\n", 1)
    messages = [f.message for f in check_source(text).findings if f.check == "sandbox"]
    assert any("sys.modules" in m for m in messages) and any("__import__" in m for m in messages)


@pytest.mark.parametrize("path", LEGIT)
def test_legitimate_kernels_have_no_static_findings(path: str):
    assert check_source(source(path)).findings == []


def test_convolution_is_allowed_only_through_the_input_kernels_allowance():
    conv = problem("conv")
    allowance = input_allowance(conv)
    assert "self.conv" in allowance
    text = source("conv/good.py")
    assert check_source(text, allow=allowance).findings == []
    refused = check_source(text).findings
    assert [f.check for f in refused] == ["torch-compute"] and "self.conv" in refused[0].message


def test_allowance_does_not_let_more_work_move_to_torch():
    # the input kernel keeps only the conv; a candidate that also hands the ReLU to torch is refused
    text = source("conv/good.py").replace("y = self.conv(x).contiguous()", "y = torch.relu(self.conv(x)).contiguous()")
    refused = check_source(text, allow=input_allowance(problem("conv"))).findings
    assert [f.check for f in refused] == ["torch-compute"] and "torch.relu" in refused[0].message


PRUNE = '''def _fit(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK_K"] <= max(16, named_args["K"])]


@triton.autotune(
'''


def test_an_autotune_prune_function_in_the_decorator_is_not_a_kernel_calling_host_code():
    text = source("linear/autotuned.py").replace("@triton.autotune(\n", PRUNE, 1)
    text = text.replace('    key=["M", "N", "K"],\n', '    key=["M", "N", "K"],\n    prune_configs_by={"early_config_prune": _fit},\n')
    assert "_fit}" in text and check_source(text).findings == []


LAUNCH = "        _linear_relu_kernel[grid](x, self.linear.weight, self.linear.bias, out, M, N, K)\n"


def _config_launch(table: str) -> str:
    """linear/good.py's launch with its tiles spread from a module-level table."""
    text = source("linear/autotuned.py")
    text = text[:text.index("@triton.autotune(")] + "@triton.jit" + text[text.index("\ndef _linear_relu_kernel"):]
    text = text.replace("\n\n\nclass ModelNew", f"\n\n\ndef _host_act(v):\n    return v\n\n\nCONFIG = {table}\n\n\n"
                                                "class ModelNew", 1)
    return text.replace(LAUNCH, LAUNCH.replace("M, N, K)", "M, N, K, **CONFIG)"), 1)


def test_a_launch_may_spread_a_table_of_constants_but_not_a_host_function_hidden_in_one():
    constants = _config_launch('{"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}')
    assert "**CONFIG" in constants and check_source(constants).findings == []
    hidden = _config_launch('{"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "ACT": _host_act}')
    assert any(f.check == "jit-body" and "CONFIG" in f.message for f in check_source(hidden).findings)
