"""Interleaved timing of a candidate against a baseline, in one worker, on one device.

Each repetition times both (order alternating), each call after an L2 flush, on input sets rotated
so no cache carries over; the speedup is the median of per-pair ratios, so slow drift of clocks or
temperature cancels. A candidate counts as faster only above max(2%, the measured spread).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from xe_forge.targets.base import Device
from xe_forge.verify.models import Timing

MIN_MARGIN = 0.02
ROTATE = 3


def _quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def choose_reps(one_call_ms: float, budget_ms: float = 1500.0, lo: int = 10, hi: int = 200) -> int:
    return int(max(lo, min(hi, budget_ms / max(one_call_ms, 1e-3) / 2)))


def interleaved(device: Device, candidate: Callable[[Any], Any], baseline: Callable[[Any], Any],
                input_sets: list[Any], *, warmup: int = 5, reps: int | None = None) -> Timing:
    """Time candidate(inputs) and baseline(inputs) alternately; both already built on the device."""
    for i in range(warmup):
        candidate(input_sets[i % len(input_sets)])
        baseline(input_sets[i % len(input_sets)])
    device.synchronize()
    probe = device.time_ms(lambda: candidate(input_sets[0]))
    reps = reps or choose_reps(probe)
    cand_ms, base_ms, ratios = [], [], []
    for i in range(reps):
        inputs = input_sets[i % len(input_sets)]
        first, second = (candidate, baseline) if i % 2 == 0 else (baseline, candidate)
        t1 = device.time_ms(lambda f=first, x=inputs: f(x))
        t2 = device.time_ms(lambda f=second, x=inputs: f(x))
        c, b = (t1, t2) if i % 2 == 0 else (t2, t1)
        cand_ms.append(c)
        base_ms.append(b)
        ratios.append(b / max(c, 1e-9))
    return summarize(cand_ms, base_ms, ratios)


def summarize(cand_ms: list[float], base_ms: list[float], ratios: list[float]) -> Timing:
    speedup = statistics.median(ratios)
    spread = (_quantile(ratios, 0.75) - _quantile(ratios, 0.25)) / max(speedup, 1e-9)
    margin = max(MIN_MARGIN, spread)
    return Timing(
        candidate_ms=statistics.median(cand_ms), baseline_ms=statistics.median(base_ms), speedup=speedup,
        spread=spread, margin=margin, faster=speedup > 1.0 + margin, reps=len(ratios),
        candidate_spread_ms=_quantile(cand_ms, 0.75) - _quantile(cand_ms, 0.25),
        baseline_spread_ms=_quantile(base_ms, 0.75) - _quantile(base_ms, 0.25),
    )
