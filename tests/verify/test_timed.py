"""Class 3: what is timed is what is checked.

Every timed call runs on fresh inputs drawn from its own secret seed (nothing to memoise), its output
is fingerprinted for the reference process, a secret sample of the calls goes through the full
harness (audit, launch count) with the whole output compared, and the parent's own clock bounds what
the timer reports. These run the timing protocol through the interpreter (`cpu_timing`: the figures
mean nothing, the checks are the same).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source
from xe_forge.verify.trials import WARM_CALLS

from .helpers import checks, failed, source, unguarded


@pytest.fixture(scope="module")
def timing() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=300, trials=1, cpu_timing=True) as ev:
        yield ev


def timed(ev: Evaluator, path: str, problem, *, baseline: str | None = None):
    return ev.evaluate(source(path), problem, time_it=True, full=False,
                       baseline_source=source(baseline) if baseline else None)


def test_an_honest_kernel_is_timed_and_every_check_holds(timing: Evaluator, linear):
    verdict = timed(timing, "linear/good.py", linear, baseline="linear/good.py")
    assert verdict.passed, verdict.feedback()
    assert list(verdict.timings) == ["input kernel"] and verdict.timing.reps >= 5  # sampled calls are not timed
    clock = verdict.timing.clock  # spins only where the candidate came out faster
    assert clock is None or (clock.verdict in ("consistent", "unresolved") and len(clock.null_wall_ms) == 3)
    assert not verdict.speed_measured, "interpreter figures are never reported as measured speed"


@pytest.mark.parametrize("path, check", [("timed/count_calls.py", "timed-output"),
                                         ("timed/stale_when_timed.py", "timed-output"),
                                         ("timed/torch_when_timed.py", "timed-audit")])
def test_behaving_differently_while_timed_is_caught(path: str, check: str, timing: Evaluator, linear):
    assert check_source(source(path)).findings == [], "ordinary code: only running it can tell"
    assert not timing.evaluate(source(path), linear, full=False, time_it=False).passed, "the late call catches it"
    timing.warm_calls = (0, 1)  # without the check's own late call (rule 5c), the timing's defences alone
    try:
        assert timing.evaluate(source(path), linear, full=False, time_it=False).passed, "a first call cannot tell"
        verdict = timed(timing, path, linear)
    finally:
        timing.warm_calls = WARM_CALLS
    failed(verdict, "timing")
    assert check in checks(verdict), verdict.feedback()
    assert verdict.timings == {} and verdict.timing is None


def test_a_lying_timer_is_caught_by_the_parents_clock(linear):
    with Evaluator("cpu", timeout=300, trials=1, cpu_timing=True) as ev, unguarded(ev):  # its process stays lied to
        verdict = timed(ev, "timed/lying_timer.py", linear, baseline="linear/good.py")
    failed(verdict, "timing")
    assert "timing-inconsistent" in checks(verdict), verdict.feedback()
    assert "parent's clock saw" in verdict.findings[0].message


def test_final_verification_times_after_the_unseen_shapes(timing: Evaluator, linear):
    """As final_verify does: unseen shapes, then timing at the visible shape's weights."""
    verdict = timing.evaluate(source("linear/good.py"), linear, unseen=True, time_it=True,
                              baseline_source=source("linear/good.py"))
    assert verdict.passed, verdict.feedback()
    assert len(verdict.correctness) > 3 and verdict.timing is not None
