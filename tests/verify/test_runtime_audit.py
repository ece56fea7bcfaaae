"""The run-time torch audit: heavy torch work that static analysis cannot see is still caught."""

from __future__ import annotations

from xe_forge.verify.hooks import torch_compute_audit
from xe_forge.verify.static import check_source

from .helpers import checks, finding, problem, source


def test_the_hidden_torch_gemm_passes_the_static_checks():
    assert check_source(source("hacks/torch_gemm_in_helper_object.py")).passed


def test_hidden_torch_gemm_is_rejected_at_run_time(evaluator):
    verdict = evaluator.evaluate(source("hacks/torch_gemm_in_helper_object.py"), problem("linear"))
    assert not verdict.passed and verdict.stage_failed == "ghost"
    assert checks(verdict) == {"torch-compute"}
    assert "mm" in finding(verdict, "torch-compute").message


def test_an_allowance_turns_the_audit_off(evaluator):
    """A first port that keeps torch work (declared) is not audited at run time: the allowance governs."""
    verdict = evaluator.evaluate(source("hacks/torch_gemm_in_helper_object.py"), problem("linear"),
                                 allow_torch={"torch.mm"})
    assert verdict.passed


def test_honest_kernel_runs_no_heavy_torch_op(evaluator):
    assert evaluator.evaluate(source("linear/good.py"), problem("linear")).passed


def test_audit_sees_methods_operators_and_functional_calls():
    import torch
    import torch.nn.functional as F

    x = torch.randn(4, 4)
    with torch_compute_audit() as seen:
        _ = x @ x
        _ = F.linear(x, x)
        _ = x.softmax(-1)
        _ = torch.empty(3).fill_(1.0) + 1  # allocation and elementwise are not heavy
    assert seen == ["matmul", "linear", "softmax"]
