"""Class 7: the precision contract.

Under `keep`, fp32 means IEEE fp32 at 1e-4; 16-bit contracts are judged against an fp32 reference on
the same rounded values. TF32 in tl.dot (asked for, or Triton's default on fp32 operands) is caught
on the CPU too: the harness's interpreter rounds the operands to TF32 as a GPU does (cpu.py), so
the verdict is the one benchmarks/verifier_gpu.py shows on CUDA. Switching the precision through the environment or torch's flags is an escape
(test_escapes.py: environ_write, tf32_flag_write).
"""

from __future__ import annotations

import pytest

from xe_forge.verify.compare import tolerance
from xe_forge.verify.evaluate import Evaluator

from .helpers import failed, source


@pytest.mark.parametrize("dtype, precision, tol", [("float32", "keep", 1e-4), ("float32", "allow-tf32", 5e-3),
                                                   ("bfloat16", "bf16", 1e-2), ("float16", "keep", 1e-2)])
def test_the_contract_as_numbers(dtype: str, precision: str, tol: float):
    assert tolerance(dtype, precision) == (tol, tol)
    assert tolerance(dtype, precision, rtol=0.5) == (0.5, tol), "a spec's own tolerance wins"


def test_tf32_fails_the_fp32_contract_on_the_cpu_as_on_a_gpu(evaluator: Evaluator, linear):
    verdict = evaluator.evaluate(source("precision/tf32_dot.py"), linear)
    failed(verdict, "correctness")
    worst = max(c.max_abs_err for t in verdict.correctness[0].trials for c in t.comparisons)
    assert worst > 1e-4
    exact = evaluator.evaluate(source("precision/tf32_dot.py").replace('input_precision="tf32"',
                                                                       'input_precision="ieee"'), linear)
    assert exact.passed, exact.feedback()


@pytest.mark.parametrize("path", ["precision/bf16_intermediate.py", "precision/half_inputs.py",
                                  "hacks/low_precision.py"])
def test_lower_precision_than_the_contract_fails_at_fp32(path: str, evaluator: Evaluator, linear):
    verdict = evaluator.evaluate(source(path), linear)
    # half_inputs rounds in torch (x.half().float()): a lossy cast, so torch compute too (casts.py)
    failed(verdict, "audit" if path == "precision/half_inputs.py" else "correctness")
    worst = max(c.max_abs_err for t in verdict.correctness[0].trials for c in t.comparisons)
    assert worst > 1e-4


def test_a_failing_comparison_names_its_first_bad_element_in_any_layout():
    """The first bad index is what the finding names; it is found without listing every bad index (a
    large failing output's `nonzero()` once asked for 11 GiB on an H100)."""
    import torch

    from xe_forge.verify.compare import compare

    want = torch.randn(4, 6, 5)
    got = want.clone().transpose(0, 2).contiguous().transpose(0, 2)  # same values, other strides
    got[2, 3, 1] += 10.0
    got[3, 0, 0] += 10.0
    result = compare("out", got, want, 1e-4, 1e-4, torch.float32)
    assert result.first_bad_index == [2, 3, 1] and result.mismatches == 2
