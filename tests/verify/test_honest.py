"""Honest kernels the checks must accept: how people actually write launches.

A launch inside a launcher object, `kernel = triton.jit(fn)` instead of the decorator, the call form
of autotune, and several launches joined with torch.cat / torch.stack / views (data movement is not
compute). Each passes the static scan and the whole evaluation, unseen shapes included.
"""

from __future__ import annotations

import pytest

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source

from .helpers import source

HONEST = ["honest/launcher_object.py", "honest/jit_call.py", "honest/autotune_call.py", "honest/cat_join.py",
          "honest/stack_views.py",
          # what the host subset must allow (issue 26): a Python set's add in a launcher, a grid lambda run
          # inside the launch, an autotune pre-hook zeroing an atomics buffer, TorchInductor's generated style
          "honest/set_add_launcher.py", "honest/grid_lambda.py", "honest/autotune_zero_hook.py",
          "honest/inductor_style.py"]


@pytest.mark.parametrize("path", HONEST)
def test_honest_kernel_passes(path: str, evaluator: Evaluator, linear):
    assert check_source(source(path)).findings == []
    verdict = evaluator.evaluate(source(path), linear, unseen=True)
    assert verdict.passed, verdict.feedback()
    main = verdict.correctness[0]
    assert main.launches >= 1 and main.ghost_changed and main.audit.torch_flops == 0


def test_joining_launches_is_movement_not_compute(evaluator: Evaluator, linear):
    verdict = evaluator.evaluate(source("honest/cat_join.py"), linear)
    assert verdict.passed and verdict.correctness[0].launches == 2
    assert verdict.correctness[0].audit.movement_bytes > 0 and verdict.correctness[0].audit.compute_ops == {}


def test_a_verdict_says_where_its_time_went(evaluator: Evaluator, linear):
    """Each worker request's wall time, largest first, within the verdict's own seconds: what a slow check
    at KernelBench shapes is read from."""
    verdict = evaluator.evaluate(source("honest/jit_call.py"), linear, unseen=True)
    spent = verdict.phase_seconds
    assert verdict.passed and {"judge Prepare", "runner Run", "judge Compare"} <= set(spent)
    assert list(spent.values()) == sorted(spent.values(), reverse=True)
    assert 0 < sum(spent.values()) <= verdict.seconds + 0.05
    again = evaluator.evaluate(source("honest/jit_call.py"), linear)  # this evaluation's time, not the total
    assert sum(again.phase_seconds.values()) <= again.seconds + 0.05
