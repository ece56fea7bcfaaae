"""The parent's own clock against the candidate's timer: a rule a reviewer can check with a pencil.

The device timer runs in the candidate's process, so the parent holds evidence of its own. It asks
that process for padded spins: n iterations that each queue `pad` cache flushes, then one call (or,
in the null spin, nothing), then the output's fingerprint (a stand-in of the same shapes in the
null spin), with one synchronize at the end. The flushes queued ahead keep the device busy while the
host prepares the next call, so the device never waits for the host and the wall clock around a
spin is its device work plus a fixed overhead. The null spin has the same flushes, fingerprints,
overhead and synchronisation, without the call: the difference of the two, divided by n, is the
device work of one call, with host time removed alike from both.

Rule (R rounds of spins, null and candidate alternating):

    null_level = median(null_wall) + 3 * 1.4826 * MAD(null_wall) + JITTER_MS
    device_low = (min(candidate_wall) - null_level) / n

is the least device work per call the clock is consistent with (noise read in the candidate's
favour: its fastest spin against a null level past the nulls' own spread; a stall only ever adds
time, so one slow null round neither tightens nor voids the bound). The timer's median for the
candidate must be at least (1 - tolerance) * device_low: a timer that reports less than the work
the clock saw is lying. A device timer can still include idle gaps a call leaves while its host
code runs (the timed loop has one flush ahead of each call, as triton.testing.do_bench does), so the
honest timer never reads below the padded device work; the clock cannot see a lie that stays within
those gaps, and says so. Where device_low is not positive the clock cannot resolve the call. That is
"unresolved" (the ratio rests on the device timer) only while the timer's own figure for a spin,
n * reported, is also within the clock's noise; a timer that claims more device work per spin than
the clock could miss, where the clock saw none, is "inconsistent": the spin holds those calls, and
the parent's clock would have seen them (an H200 once let a timer doctored 1.5x at 10 ms pass as
"unresolved").

The baseline needs no such check: it is timed in a process that never runs the candidate.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import BaseModel, Field

ABS_SLACK_MS = 0.002  # device event resolution (about 0.5 us on CUDA) and rounding
JITTER_MS = 0.1  # the least wall-clock jitter of a spin's round trip through the worker's pipe
CLAIM_MARGIN_MS = 1.0  # device work per spin past twice the nulls' spread that the clock cannot miss


class ClockCheck(BaseModel):
    """The parent's wall-clock evidence about the candidate's device time, and what it concluded."""

    n: int  # calls per spin
    pad: int  # flushes queued ahead of each call
    null_wall_ms: list[float] = Field(default_factory=list)  # parent's clock around each null spin
    candidate_wall_ms: list[float] = Field(default_factory=list)  # ... around each candidate spin
    device_low_ms: float | None = None  # least device work per call the clock allows; None: not resolved
    reported_ms: float = 0.0  # the timer's median per call for the candidate
    tolerance: float = 0.15
    verdict: Literal["consistent", "unresolved", "inconsistent"] = "unresolved"

    @property
    def floor_ms(self) -> float | None:
        """The least per-call time an honest timer can report."""
        if self.device_low_ms is None:
            return None
        return (1.0 - self.tolerance) * self.device_low_ms - ABS_SLACK_MS

    def message(self, baseline_ms: float) -> str:
        floor = self.floor_ms or 0.0
        if floor <= 0:
            return (f"the timer reports the candidate at {self.reported_ms:.4f} ms per call, "
                    f"{self.reported_ms * self.n:.1f} ms per padded spin (n={self.n}), but the parent's clock saw no "
                    "more device work in the candidate's spins than in the null ones: the speedup is not confirmed")
        allowed = baseline_ms / floor
        return (f"the timer reports the candidate at {self.reported_ms:.4f} ms per call, but the parent's clock saw "
                f"{self.device_low_ms:.4f} ms of device work per call in padded spins (n={self.n}, host time hidden): "
                f"the speedup it allows is at most {allowed:.2f}x")


def null_level(null_wall_ms: list[float]) -> tuple[float, float]:
    """(level, spread) of the null spins: their median plus a robust spread (3 scaled MADs) and the
    clock's jitter floor; the spread is what the clock cannot tell from no work at all."""
    median = statistics.median(null_wall_ms)
    spread = 3 * 1.4826 * statistics.median(abs(w - median) for w in null_wall_ms) + JITTER_MS
    return median + spread, spread


def judge_clock(null_wall_ms: list[float], candidate_wall_ms: list[float], *, n: int, pad: int,
                reported_ms: float, tolerance: float) -> ClockCheck:
    """Apply the rule above to the walls of R rounds of spins."""
    check = ClockCheck(n=n, pad=pad, null_wall_ms=list(null_wall_ms), candidate_wall_ms=list(candidate_wall_ms),
                       reported_ms=reported_ms, tolerance=tolerance)
    if not null_wall_ms or not candidate_wall_ms or n <= 0:
        return check
    level, spread = null_level(null_wall_ms)
    low = (min(candidate_wall_ms) - level) / n
    floor = (1.0 - tolerance) * low - ABS_SLACK_MS
    if floor <= 0.0:
        if reported_ms * n > 2 * spread + CLAIM_MARGIN_MS:  # the timer's calls would have shown
            check.verdict = "inconsistent"
            check.device_low_ms = max(low, 0.0)
        return check
    check.device_low_ms = low
    check.verdict = "consistent" if reported_ms >= floor else "inconsistent"
    return check


HOST_FLUSH_MS = 0.01  # the host's time to queue one flush


MAX_PAD = 32


def flush_pad(host_ms: float, flush_ms: float) -> int:
    """Cache flushes to queue ahead of each call so the device's queue outlasts 1.5x the host's time for one
    iteration (the call's host code and queueing the flushes themselves): the host stays ahead, and a mark
    pair holds the call's device work, not the device idling while the host prepares a short call (an
    H200 read a 12 us kernel at 61 us with one flush, behind 60 us of host code)."""
    if flush_ms <= 1.5 * HOST_FLUSH_MS:
        return 1
    return min(MAX_PAD, max(1, int(-(-1.5 * (host_ms + HOST_FLUSH_MS) // (flush_ms - 1.5 * HOST_FLUSH_MS)))))


def spin_size(call_ms: float, flush_ms: float, host_ms: float, *, spin_ms: float = 120.0, lo: int = 5,
              hi: int = 2000) -> tuple[int, int]:
    """(n, pad) for a spin: pad flushes cover 1.5x the host time of one iteration, n fills spin_ms."""
    pad = flush_pad(host_ms, flush_ms)
    per_iteration = pad * flush_ms + call_ms
    n = int(max(lo, min(hi, spin_ms / max(per_iteration, 1e-3))))
    return n, pad
