"""Red team 2, root causes 4, 5 and 10: what the CPU check used to let through because the interpreter
and the audit were kinder than a GPU.

- Programs of a launch run in a secret order and, in most launches, without seeing each other's
  stores (targets/interpreter_races.py): a plain load + store accumulation across programs, and "the
  last program sums the partials", are wrong here as on a GPU; a race-free split reduction is not.
- Every autotune config serves checked calls in turn (targets/autotune_rotation.py): a config that
  drops the bias is compared, where the first config alone used to be.
- A lossy cast (float to int, to a narrower float) is compute (verify/casts.py): trunc done by
  `x.to(int32).to(float32)` is torch work, while a final cast to the run's dtype is not.
(TF32 rounding: test_precision.py; state compared elementwise: test_state.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.casts import lossy_cast
from xe_forge.verify.evaluate import Evaluator

from .helpers import failed, finding

RED2 = Path(__file__).resolve().parents[2] / "redteam" / "red2"


def _check(evaluator: Evaluator, path: str):
    kernel = RED2 / path
    problem = load_problem(kernel, kernel.parent / "ref_pytorch.py", kernel.parent / "spec.yaml", None)
    return evaluator.evaluate(problem.kernel.source, problem, unseen=True, time_it=False)


@pytest.mark.parametrize("path", ["rowsum/atk_racy_accumulate.py", "rowsum/atk_last_program_finishes.py"])
def test_kernels_that_need_programs_in_grid_order_fail(path: str, evaluator: Evaluator):
    verdict = _check(evaluator, path)
    failed(verdict, "correctness")


def test_a_race_free_split_reduction_passes(evaluator: Evaluator):
    verdict = _check(evaluator, "rowsum/honest_split_reduce.py")
    assert verdict.passed, verdict.feedback()


def test_every_autotune_config_is_compared(evaluator: Evaluator):
    verdict = _check(evaluator, "linear_lrelu/atk_autotune_bad_config.py")
    # the rotation serves the bad config at some checked call: at the visible shape or an unseen one
    assert not verdict.passed and verdict.stage_failed in ("correctness", "unseen"), verdict.feedback()
    honest = _check(evaluator, "linear_lrelu/honest_autotune.py")
    assert honest.passed, honest.feedback()


def test_trunc_through_an_integer_cast_is_torch_compute(evaluator: Evaluator):
    verdict = _check(evaluator, "trunc_bias/atk_cast_trunc.py")
    failed(verdict, "audit")
    assert "cast float32->int32" in finding(verdict, "torch-compute").message
    honest = _check(evaluator, "trunc_bias/honest_dtype_constexpr.py")
    assert honest.passed, honest.feedback()


def test_which_casts_lose_information():
    f32, bf16 = frozenset({torch.float32}), frozenset({torch.bfloat16})
    x = torch.randn(3)
    assert lossy_cast("_to_copy", (x,), x.to(torch.int32), f32) == "float32->int32"
    assert lossy_cast("_to_copy", (x,), x.to(torch.float16), f32) == "float32->float16"
    assert lossy_cast("_to_copy", (x,), x.bool(), f32) == "float32->bool"
    assert lossy_cast("copy_", (torch.empty(3, dtype=torch.int64), x), None, f32) == "float32->int64"
    assert lossy_cast("_to_copy", (x,), x.to(torch.bfloat16), bf16) is None, "the final cast to the run's dtype"
    assert lossy_cast("_to_copy", (x.half(),), x.half().float(), f32) is None, "widening keeps every value"
    idx = torch.arange(4)
    assert lossy_cast("_to_copy", (idx,), idx.to(torch.int32), f32) is None, "int64 indices handed over as int32"
    assert lossy_cast("_to_copy", (idx,), idx.float(), f32) is None
    assert lossy_cast("clone", (x,), x.clone(), f32) is None
