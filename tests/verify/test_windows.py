"""Issue 26, classes 1 and 7: no window in which candidate code runs unwatched, and allowances that
admit one op's own dispatch only.

Torch work is attributed by the frames that asked for it (verify/frames.py): a grid callable, a
pre-run hook, a tensor-like argument's method, a host callable handed to a kernel are the file's
own code wherever Triton calls them, and what they compute is refused like forward's; the
interpreter's own copies are Triton's frames inside a launch. Inside an allowed call, candidate code
is still the candidate's; an allowance names a torch.nn leaf module or a function, and its FLOPs stay
within the baseline's (in `check` too, where the reference sets the budget).
"""

from __future__ import annotations

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source

from .helpers import FIXTURES, failed, finding, problem, source, unguarded

# each computes the GEMM in torch inside the launch, with a spelling no name list holds
WINDOWS = ["windows/grid_gemm.py", "windows/pre_hook_gemm.py"]


@pytest.mark.parametrize("path", WINDOWS)
def test_torch_work_inside_a_launch_is_the_candidates(path: str, evaluator: Evaluator, linear):
    assert check_source(source(path)).findings == [], "nothing for the static scan: the window is a run-time one"
    verdict = evaluator.evaluate(source(path), linear)
    failed(verdict, "audit")
    assert "mul" in finding(verdict, "torch-compute").message


def test_a_python_callable_passed_to_a_kernel_is_refused_at_the_launch(evaluator: Evaluator, linear):
    """The interpreter runs a jit body as Python, so a host callable passed as a constexpr runs inside the
    launch (torch there, or numpy on the tiles' handles, which no dispatch audit sees: red team 5, a05)."""
    path = "windows/constexpr_callable_gemm.py"
    assert check_source(source(path)).findings == [], "nothing for the static scan: the window is a run-time one"
    verdict = evaluator.evaluate(source(path), linear)
    failed(verdict, "audit")
    assert "is a Python callable" in finding(verdict, "host-subset").message


def test_a_torch_function_triton_calls_back_is_the_candidates(evaluator: Evaluator, linear):
    """Red team 2's worst hole: `kernel.add_pre_run_hook(torch.addmm)` leaves no frame of the file's on
    the stack; Triton's launcher calling it is not bookkeeping, so the GEMM is the candidate's."""
    path = "windows/torch_hook_gemm.py"
    # statically, holding `torch.addmm` as a value is refused as its call is (red team 8 a01b); the
    # audit stands on its own for a route the scan cannot see
    found = [f.message for f in check_source(source(path)).findings]
    assert found and all("torch.addmm" in m for m in found), found
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source(path), linear)
    failed(verdict, "audit")
    assert "addmm" in finding(verdict, "torch-compute").message


def test_a_kernel_is_only_launched_never_reached_into():
    hooked = source("windows/torch_hook_gemm.py").replace(
        "_registry = [_carrier_kernel]\nfor _k in _registry:\n    _k.add_pre_run_hook(torch.addmm)",
        "_carrier_kernel.add_pre_run_hook(torch.addmm)")
    assert "_registry" not in hooked
    messages = [f.message for f in check_source(hooked).findings if f.check == "host-subset"]
    assert any("`.add_pre_run_hook` of the kernel `_carrier_kernel`" in m for m in messages), messages
    op = source("windows/triton_op_kernel.py").replace("_ops = [linear_epilogue]\nfor _op in _ops:\n    _op.", "linear_epilogue.")
    assert any("`.register_kernel` of the kernel `linear_epilogue`" in f.message for f in check_source(op).findings)


def test_a_triton_op_body_is_audited_like_forward(evaluator: Evaluator, linear):
    """torch.library.triton_op (PyTorch's way to ship a Triton kernel) is host code's; its body is the
    file's own function, which dispatch would hide from the audit: the audit runs it under itself."""
    path = "windows/triton_op_gemm.py"
    assert [f.check for f in check_source(source(path)).findings] == ["torch-compute"]
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source(path), linear)
    failed(verdict, "audit")
    assert "matmul" in finding(verdict, "torch-compute").message


def test_a_triton_op_given_another_kernel_is_the_torch_op_it_is(evaluator: Evaluator, linear):
    path = "windows/triton_op_kernel.py"
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source(path), linear)
    assert not verdict.passed  # no launch either: the CPU kernel registered for the op is all that ran
    assert "linear_epilogue_kernel" in finding(verdict, "torch-compute").message


def test_a_tensor_like_argument_is_refused_at_the_launch(evaluator: Evaluator, linear):
    """The interpreter also wants its storage (a host exit the subset refuses); with the scan off, the
    object itself is refused at the launch: a kernel takes kernel data (launch_record.py's allowlist), and
    the GEMM its `data_ptr` would run inside the launch never runs."""
    assert {f.check for f in check_source(source("windows/data_ptr_gemm.py")).findings} == {"host-compute"}
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("windows/data_ptr_gemm.py"), linear)
    failed(verdict, "audit")
    assert "launch argument" in finding(verdict, "host-subset").message


def test_an_object_run_inside_an_allowed_call_is_not_the_allowance(evaluator: Evaluator, linear):
    path = "allowances/flag_dunder_gemm.py"
    assert check_source(source(path), allow=["F.dropout"]).findings == []
    verdict = evaluator.evaluate(source(path), linear, allow_torch={"F.dropout"})
    failed(verdict, "audit")
    assert "mul" in finding(verdict, "torch-compute").message


def test_a_container_under_an_allowed_name_is_not_an_allowed_submodule(evaluator: Evaluator):
    conv = problem("conv")
    verdict = evaluator.evaluate(source("allowances/container_submodule.py"), conv, allow_torch={"self.conv"})
    # its keys (`conv.0.weight`) are not the reference's (`conv.weight`): refused as an interface change
    # (red team 8, a44) before its forward runs under the audit, which would refuse the container's work
    failed(verdict, "correctness")
    assert "`conv.0.weight`" in finding(verdict, "state-dict").message


def test_an_exception_inside_an_allowed_call_leaves_nothing_allowed(evaluator: Evaluator):
    conv = problem("conv")
    assert any("contextlib" in f.message for f in check_source(source("allowances/exception_leak.py"),
                                                                allow=["self.conv"]).findings)
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("allowances/exception_leak.py"), conv, allow_torch={"self.conv"})
    failed(verdict, "audit")
    message = finding(verdict, "torch-compute").message
    assert "relu" in message and "convolution" not in message


def test_check_applies_the_flop_budget_of_the_reference(evaluator: Evaluator):
    """`check` has no input kernel apart from the candidate: the reference's own conv FLOPs are the budget."""
    path = FIXTURES / "audit" / "allowed_twice.py"
    checked = load_problem(path, FIXTURES / "conv" / "ref_pytorch.py", FIXTURES / "conv" / "spec.yaml")
    verdict = evaluator.evaluate(checked.kernel.source, checked, allow_torch={"self.conv"})
    failed(verdict, "audit")
    message = finding(verdict, "torch-budget").message
    assert "conv" in message and "the reference" in message
    honest = load_problem(FIXTURES / "conv" / "good.py", FIXTURES / "conv" / "ref_pytorch.py",
                          FIXTURES / "conv" / "spec.yaml")
    assert evaluator.evaluate(honest.kernel.source, honest, allow_torch={"self.conv"}).passed
