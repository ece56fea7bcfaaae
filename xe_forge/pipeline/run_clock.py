"""A run's time budget, kept at the granularity that can overrun it: one candidate, one lowering.

A budget checked only between stages let a stage that started with seconds left run its every candidate
(a 150 s GPU run ended at 7 minutes), and the final check, which a run always makes, came on top.
So the clock keeps room for the final check (estimated from the input's own check, the one figure a
run has before any candidate), starts a candidate only where one more of the slowest seen so far still
fits before that room, and hands the lowering a share of what is left as its autotuning budget.

On a GPU the rules engine has a default budget (DEFAULT_GPU_SECONDS): a user who runs `optimize`
with no options gets an answer in minutes, never an open-ended autotuning session. `--budget` sets
another, `--budget none` removes it. The CPU (the interpreter checks correctness, nothing is timed)
and the LLM engine (its budget is dollars or tokens) have none unless asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

DEFAULT_GPU_SECONDS = 150.0  # issue 25: an optimize at default settings ends within 150 s on one GPU
FINAL_FACTOR = 1.5  # the final check: unseen shapes plus one timing against up to four sides
FINAL_FLOOR_S = 10.0
COMPILE_S = 20.0  # a timed final also compiles the reference with torch.compile (one side it is timed against)
LOWERING_SHARE = 0.35  # of the time left after the final's room, for TorchInductor's autotuning
LOWERING_FLOOR_S = 5.0  # below this the lowering is not started: it would be cut before measuring anything


@dataclass
class RunClock:
    """Seconds left, measured on an injectable monotonic clock (the CPU tests drive a fake one)."""

    budget_s: float | None
    now: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    final_s: float = FINAL_FLOOR_S  # room kept for the final check, set from the input's check
    slowest_s: float = 0.0  # the slowest candidate evaluation so far

    def __post_init__(self) -> None:
        self.started = self.now()

    @property
    def deadline(self) -> float | None:
        return None if self.budget_s is None else self.started + self.budget_s

    def left(self) -> float | None:
        """Seconds before the final check must start; None without a budget."""
        if self.budget_s is None:
            return None
        return self.started + self.budget_s - self.final_s - self.now()

    def saw_input_check(self, seconds: float, timed: bool = False) -> None:
        """The input's check is the run's first measured evaluation: the final check's room (`timed`: the
        final is timed against torch.compile too, whose compile the input's check never paid), and the
        first estimate of a candidate's cost (a candidate is checked the same way, and also timed)."""
        self.final_s = max(FINAL_FLOOR_S, FINAL_FACTOR * seconds + (COMPILE_S if timed else 0.0))
        if self.budget_s is not None:  # never more than half the budget: a slow input must leave stages room
            self.final_s = min(self.final_s, 0.5 * self.budget_s)
        self.slowest_s = max(self.slowest_s, seconds)

    def saw_candidate(self, seconds: float) -> None:
        self.slowest_s = max(self.slowest_s, seconds)

    def stage_stop(self) -> str | None:
        """Why no further stage may start: the time before the final check is spent."""
        left = self.left()
        return "time budget spent" if left is not None and left <= 0 else None

    def candidate_stop(self) -> str | None:
        """Why no further candidate may start: one more as slow as the slowest seen would end past the room
        kept for the final check."""
        left = self.left()
        if left is None or left >= self.slowest_s:
            return None
        return (f"time budget: {max(left, 0.0):.0f} s left before the final check, a candidate takes up to "
                f"{self.slowest_s:.0f} s here")

    def lowering_budget(self, cap: float) -> float | None:
        """Seconds of autotuning for a lowering started now (at most `cap`); None: not enough time to start one."""
        left = self.left()
        if left is None:
            return cap
        share = LOWERING_SHARE * (left - self.slowest_s)  # the lowered port is checked after it is made
        return min(cap, share) if share >= LOWERING_FLOOR_S else None

    def describe(self) -> str:
        return "none" if self.budget_s is None else f"{self.budget_s:.0f} s"


def default_budget_s(engine: str, measures_speed: bool) -> float | None:
    """The budget a run has when none is given: the rules engine on a GPU only (module docstring)."""
    return DEFAULT_GPU_SECONDS if engine == "rules" and measures_speed else None
