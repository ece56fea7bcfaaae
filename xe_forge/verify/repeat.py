"""`xe-forge bench --repeat N`: the same timing in N fresh processes, and how far the figures move.

One timed run interleaves the kernel with its baseline in one worker, so drift inside that process
cancels; what it cannot show is how much a figure moves between processes (clocks, placement, the
allocator, a busy GPU). Each repetition here starts a new Evaluator, so new judge and runner workers,
and times the kernel again against the same baselines; the spread across them is what a user should
know before quoting one run's figure.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from xe_forge.verify.models import Timing, Verdict


class Repeated(BaseModel):
    """One baseline's figures over the fresh processes that timed it."""

    baseline: str
    runs: list[Timing] = Field(default_factory=list)

    @property
    def speedups(self) -> list[float]:
        return [t.speedup for t in self.runs]

    @property
    def median(self) -> float:
        return statistics.median(self.speedups)

    @property
    def spread(self) -> float:
        """(max - min) / median of the per-process speedups: 0.08 reads 'moves by 8% between processes'."""
        return (max(self.speedups) - min(self.speedups)) / max(self.median, 1e-12)

    @property
    def baseline_ms(self) -> list[float]:
        return [t.baseline_ms for t in self.runs]

    @property
    def kernel_ms(self) -> list[float]:
        return [t.candidate_ms for t in self.runs]


class RepeatResult(BaseModel):
    """Every repetition's verdict, and per baseline the figures across them."""

    verdicts: list[Verdict] = Field(default_factory=list)
    by_baseline: dict[str, Repeated] = Field(default_factory=dict)

    @property
    def first_failure(self) -> Verdict | None:
        return next((v for v in self.verdicts if not v.passed or not v.speed_measured), None)


def repeat_timing(open_evaluator: Callable[[], Any], time_once: Callable[[Any], Verdict], n: int,
                  on_run: Callable[[int, Verdict], None] | None = None) -> RepeatResult:
    """`time_once(evaluator)` in `n` evaluators, each opened fresh (new worker processes) and closed after.

    Stops at the first repetition that fails or measures nothing: its verdict says why."""
    result = RepeatResult()
    for i in range(n):
        with open_evaluator() as ev:
            verdict = time_once(ev)
        result.verdicts.append(verdict)
        if on_run is not None:
            on_run(i, verdict)
        if not verdict.passed or not verdict.speed_measured:
            break
        for key, timing in verdict.timings.items():
            result.by_baseline.setdefault(key, Repeated(baseline=key)).runs.append(timing)
    return result
