"""Red team 8's corpus (written against the verifier after red team 7's fixes, from docs/VERIFIER.md,
docs/SPEC.md, examples/ and xe_forge/ only; redteam/red8/RESULTS.md has its 37 attacks and 15 honest
kernels). Closed since, by class:

- backward-only code (backward_only.py): an autograd.Function's `backward`, and module-level helpers
  only it reaches, are the training path's own; a recompute backward may switch grad on and call
  `torch.autograd.grad` there (h13, h13b were refused); forward-time code is scanned as before;
- a torch function held as a value is refused as its call is (torch_names.reference_sites): a module-level
  `_q = torch.is_autocast_enabled` called in forward branched on a global mode no audit sees (a01b, a19b);
- the very same call made twice (trials.py, "the same call again": same input tensors and weights, nothing
  reloaded) must not hand back the tensor it returned before: a caller's `y1.mul_(0)` would zero y2 (a09b);
- the state dict's keys are the reference's (weights.interface_change): an extra persistent buffer the kernel
  reads broke loading the reference's checkpoint (a44);
- one checked call runs with every parameter frozen (`requires_grad_(False)`), at a secret position: a kernel
  that drops the bias for a frozen layer was never called frozen (a43);
- one more call runs in eval mode, the reference too (trials._add_eval_call): a kernel that drops the bias
  in eval mode (a02), and example 41's own first port, which normalised with batch statistics in eval
  mode (a17), were never called there; a kernel may decline eval mode with NotImplementedError;
- one dim at 1 with the others visible is an unseen shape (problem/unseen.py): a GEMV path for batch 1 that
  forgot the bias was never run (a04).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, declared_allowance
from xe_forge.verify.static import check_source

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "redteam" / "red8"
AUTOGRAD = ROOT / "tests" / "verify" / "fixtures" / "autograd"
EXAMPLES = {"76": "76_Gemm_Add_ReLU", "99": "99_Matmul_GELU_Softmax", "1": "1_Conv2D_ReLU_BiasAdd",
            "29": "29_Matmul_Mish_Mish", "41": "41_Gemm_BatchNorm_GELU_ReLU"}


@pytest.fixture(scope="module")
def cli_like() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


def _verdict(path: Path, example: str, evaluator: Evaluator, unseen: bool = False):
    folder = ROOT / "examples" / EXAMPLES[example]
    problem = load_problem(path, folder / "kernel_pytorch.py", folder / "spec.yaml", None)
    return evaluator.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem),
                              unseen=unseen, time_it=False)


def _static(source: str) -> list[tuple[str, str]]:
    return [(f.check, f.message) for f in check_source(source).findings]


# ---------------------------------------------------------------- 1. backward-only code


@pytest.mark.parametrize("name", ["h13_autograd29.py", "h13b_autograd29_manual.py"])
def test_a_recompute_or_analytic_backward_in_torch_is_honest(name: str):
    """h13 recomputes under `torch.enable_grad()` + `torch.autograd.grad`, h13b calls a module-level helper
    `_dmish` only its backward calls: both were refused statically, though backward never runs in a forward."""
    assert _static((CORPUS / name).read_text()) == []


def test_a_backward_helper_that_forward_also_calls_is_forward_time_code():
    """`_mish_t` is called by backward and by forward (the second Mish done in torch): it is scanned."""
    found = _static((AUTOGRAD / "helper_in_forward.py").read_text())
    assert any(check == "torch-compute" and "torch.tanh" in msg for check, msg in found), found
    assert not any("torch.sigmoid" in msg for _, msg in found)  # `_dmish` stays backward-only


def test_grad_switches_are_allowed_in_backward_only_code_and_nowhere_else():
    base = (CORPUS / "h13_autograd29.py").read_text()
    in_forward = base.replace(
        "        return LinearMishMish.apply(x, self.linear.weight, self.linear.bias)",
        "        with torch.enable_grad():\n"
        "            return LinearMishMish.apply(x, self.linear.weight, self.linear.bias)")
    assert any("torch.enable_grad" in msg for _, msg in _static(in_forward))
    helper = base.replace("def _launch(x, w, b):", "def _grads(y, xs, g):\n"
                          "    return torch.autograd.grad(y, xs, g)\n\n\ndef _launch(x, w, b):")
    helper = helper.replace("gx, gw, gb = torch.autograd.grad(y, (xx, ww, bb), g)", "gx, gw, gb = _grads(y, (xx, ww, bb), g)")
    assert _static(helper) == []  # a helper only backward calls may differentiate
    leaked = helper.replace("    def forward(self, x):\n", "    def forward(self, x):\n        _grads(x, (x,), x)\n")
    assert any("torch.autograd.grad" in msg for _, msg in _static(leaked))


def test_backward_only_code_forward_reaches_anyway_is_judged_by_the_audit(cli_like: Evaluator):
    """Forward calls the Function's `backward` directly, whose helper does the second Mish in torch: the
    static scan leaves both out, and the dispatch audit, the authority, refuses the work."""
    verdict = _verdict(AUTOGRAD / "backward_helper_window.py", "29", cli_like)
    assert not verdict.passed and verdict.stage_failed == "audit", verdict.feedback()


# ---------------------------------------------------------------- 2. a refused torch function held as a value


@pytest.mark.parametrize("name, op", [("a01b_autocast_alias.py", "torch.is_autocast_enabled"),
                                      ("a19b_determ_alias.py", "torch.are_deterministic_algorithms_enabled")])
def test_a_refused_torch_function_held_as_a_value_is_refused_as_its_call(name: str, op: str):
    found = _static((CORPUS / name).read_text())
    assert ("torch-compute", f"reference to `{op}` does work in torch instead of a Triton kernel") in found, found


@pytest.mark.parametrize("spelling", [
    "from torch import is_autocast_enabled as _ae\n_autocast_on = _ae\n",
    "_autocast_on = getattr(torch, 'is_autocast_enabled')\n",
    "_autocast_on = [torch.is_autocast_enabled][0]\n",
    "def _autocast_on(f=torch.is_autocast_enabled):\n    return f()\n",
])
def test_every_load_of_a_refused_path_is_refused(spelling: str):
    """Any way to hold the function (an imported name, a literal getattr, a display, a default argument)
    is the reference, wherever it stands: module level, a class body, `__init__`."""
    text = (CORPUS / "a01b_autocast_alias.py").read_text()
    text = text.replace("_autocast_on = torch.is_autocast_enabled\n", spelling)
    assert spelling in text
    found = [c for c, m in _static(text) if "is_autocast_enabled" in m]
    assert found == ["torch-compute"], _static(text)


def test_allowed_torch_names_and_non_functions_stay_free_to_hold():
    """dtypes, classes and the allowed functions (`torch.float32`, `torch.dtype`, `torch.no_grad`) are not
    torch work to hold; the honest corpus of red team 8 still passes the static scan."""
    text = (CORPUS / "h00_base76.py").read_text() + (
        "\n_DT = torch.float32\n_T = torch.dtype\n_NG = torch.no_grad\n_E = torch.empty\n")
    assert _static(text) == []


# ---------------------------------------------------------------- 3. the same call made twice


def test_an_output_cached_on_the_very_same_call_is_refused(cli_like: Evaluator):
    """a09b returns last call's tensor when input (id, data_ptr, _version) and weights (data_ptr, _version)
    are unchanged: only a call repeated with nothing touched, not even the weights reloaded, shows it."""
    verdict = _verdict(CORPUS / "a09b_outalias.py", "76", cli_like)
    assert not verdict.passed and verdict.stage_failed == "correctness", verdict.feedback()
    reuse = [f for r in verdict.correctness for t in r.trials for f in t.findings if f.check == "output-reuse"]
    assert reuse and "shares its storage" in reuse[0].message, verdict.feedback()
    honest = _verdict(CORPUS / "h00_base76.py", "76", cli_like)  # a fresh output per call passes the same trials
    assert honest.passed and "the same call again" in [t.label for t in honest.correctness[0].trials]


# ---------------------------------------------------------------- 4. the state dict's keys


def test_an_extra_state_dict_entry_is_an_interface_change(cli_like: Evaluator):
    verdict = _verdict(CORPUS / "a44_extra_buffer.py", "76", cli_like)
    assert not verdict.passed and verdict.stage_failed == "correctness", verdict.feedback()
    found = [f for f in verdict.findings if f.check == "state-dict"]
    assert found and "extra `out_scale`" in found[0].message, verdict.feedback()


def test_state_dict_keys_missing_extra_or_renamed():
    from xe_forge.verify.weights import interface_change

    ref = {"gemm.weight": 1, "bias": 2}
    assert interface_change(ref, {"bias": 0, "gemm.weight": 0}) is None  # order is not the interface
    assert "extra `out_scale`" in interface_change(ref, {**ref, "out_scale": 0})
    assert "missing `bias`" in interface_change(ref, {"gemm.weight": 0})
    renamed = interface_change(ref, {"weight": 0, "bias": 0})
    assert "missing `gemm.weight`" in renamed and "extra `weight`" in renamed


# ---------------------------------------------------------------- 5. a frozen layer


def test_a_kernel_that_reads_requires_grad_is_called_frozen(cli_like: Evaluator):
    verdict = _verdict(CORPUS / "a43_frozen.py", "76", cli_like)
    assert not verdict.passed and verdict.stage_failed == "correctness", verdict.feedback()
    # the frozen call is wrong (the finding names its inputs or its way, whichever the other trials clear)
    assert any(not t.passed for t in verdict.correctness[0].trials), verdict.feedback()


# ---------------------------------------------------------------- 6. eval mode


def _call_mode_findings(verdict) -> list[str]:
    return [f.message for r in verdict.correctness for t in r.trials for f in t.findings if f.check == "call-mode"]


def test_a_kernel_that_reads_the_training_flag_is_called_in_eval_mode(cli_like: Evaluator):
    verdict = _verdict(CORPUS / "a02_eval.py", "76", cli_like)
    assert not verdict.passed and verdict.stage_failed == "correctness", verdict.feedback()
    assert any("in eval mode (model.eval())" in m for m in _call_mode_findings(verdict)), verdict.feedback()


def test_batch_norm_in_eval_mode_uses_the_running_statistics(cli_like: Evaluator):
    """a17 is example 41's port as it stood: batch statistics whatever the mode, running ones updated in
    eval mode too. The example now normalises with the running statistics there and passes."""
    verdict = _verdict(CORPUS / "a17_ex41_eval.py", "41", cli_like)
    assert not verdict.passed and verdict.stage_failed == "correctness", verdict.feedback()
    checks = {f.check for r in verdict.correctness for t in r.trials for f in t.findings} | \
        {f.check for f in verdict.findings}
    assert {"call-mode", "state"} & checks, verdict.feedback()
    fixed = _verdict(ROOT / "examples" / EXAMPLES["41"] / "kernel.py", "41", cli_like)
    assert fixed.passed, fixed.feedback()
    assert "eval mode" in [t.label for t in fixed.correctness[0].trials]


DECLINE = "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        if not self.training:\n            raise {}\n"


def test_a_kernel_may_decline_eval_mode_and_the_verdict_says_so(cli_like: Evaluator, tmp_path: Path):
    from xe_forge.pipeline.status import skipped_checks

    text = (CORPUS / "h00_base76.py").read_text()
    head = "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
    assert head in text
    declines = tmp_path / "declines.py"
    declines.write_text(text.replace(head, DECLINE.format('NotImplementedError("training only")')))
    verdict = _verdict(declines, "76", cli_like)
    assert verdict.passed, verdict.feedback()
    assert verdict.correctness[0].eval_refused.startswith("the kernel refuses it: NotImplementedError: training only")
    problem = load_problem(declines, ROOT / "examples" / EXAMPLES["76"] / "kernel_pytorch.py")
    skipped = skipped_checks(verdict, problem)
    assert [s.what for s in skipped if s.check == "eval"] == ["eval mode not checked"]
    crashes = tmp_path / "crashes.py"  # any other exception is a failure, as anywhere else
    crashes.write_text(text.replace(head, DECLINE.format('RuntimeError("training only")')))
    failed = _verdict(crashes, "76", cli_like)
    assert not failed.passed and failed.correctness[0].eval_refused is None, failed.feedback()


def test_a_kernel_that_is_its_own_reference_and_declines_eval_mode_is_not_checked_there(cli_like: Evaluator,
                                                                                       tmp_path: Path):
    """With no PyTorch reference the input kernel judges: where it raises in eval mode, the eval-mode call
    is dropped and said so, not the whole check broken."""
    text = (CORPUS / "h00_base76.py").read_text()
    declines = tmp_path / "declines.py"
    text = text.replace("batch_size = 1024\nin_features = 8192\nout_features = 8192\n",
                        "batch_size = 13\nin_features = 72\nout_features = 80\n")  # the interpreter's sizes
    assert "in_features = 72" in text
    declines.write_text(text.replace("    def forward(self, x: torch.Tensor) -> torch.Tensor:\n",
                                     DECLINE.format('NotImplementedError("training only")')))
    problem = load_problem(declines, None)
    assert problem.reference_is_self
    verdict = cli_like.evaluate(problem.kernel.source, problem, unseen=False, time_it=False)
    assert verdict.passed, verdict.feedback()
    assert verdict.correctness[0].eval_refused.startswith("the reference itself fails there")
    assert "eval mode" not in [t.label for t in verdict.correctness[0].trials]


# ---------------------------------------------------------------- 7. batch 1


def test_a_batch_1_path_is_run(cli_like: Evaluator):
    verdict = _verdict(CORPUS / "a04_batch1.py", "76", cli_like, unseen=True)
    assert not verdict.passed and verdict.stage_failed == "unseen", verdict.feedback()
    failed = [r for r in verdict.correctness if not r.passed]
    assert failed and failed[0].dims["BATCH"] == 1, [r.dims for r in failed]
