"""The parent's clock (verify/clock.py) and the timing plan (verify/speed.py), on figures alone.

What the CPU can show of the GPU timing: the bound's arithmetic on spin figures, that both sides of
a timing get the same requests (symmetric paths), and that the repetitions fit a time budget.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import pytest

from xe_forge.verify import protocol as p
from xe_forge.verify.clock import HOST_FLUSH_MS, flush_pad, judge_clock, spin_size
from xe_forge.verify.speed import MAX_REPS, MIN_REPS, TIME_BUDGET_MS, _interleave, choose_reps, chunk_plan


def spins(call_ms: float, *, n: int, overhead_ms: float = 1.2, pad_ms: float = 0.07, jitter_ms: float = 0.3,
          rounds: int = 3, seed: int = 0) -> tuple[list[float], list[float]]:
    """Walls as the parent sees them for a padded spin: overhead + n * (pad + call) + jitter."""
    rng = random.Random(seed)
    null = [overhead_ms + n * pad_ms + rng.uniform(0, jitter_ms) for _ in range(rounds)]
    cand = [overhead_ms + n * (pad_ms + call_ms) + rng.uniform(0, jitter_ms) for _ in range(rounds)]
    return null, cand


@pytest.mark.parametrize("call_ms", [0.010, 0.05, 0.2, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("gaps", [0.0, 0.3])  # the timed loop may also hold idle gaps left by host code
def test_an_honest_timer_is_never_inconsistent(call_ms: float, gaps: float):
    n, _ = spin_size(call_ms, 0.07, 0.03)
    for seed in range(20):
        null, cand = spins(call_ms, n=n, seed=seed)
        reported = call_ms * (1 + gaps)  # the device timer never reads below the device work
        check = judge_clock(null, cand, n=n, pad=1, reported_ms=reported, tolerance=0.15)
        assert check.verdict != "inconsistent", (call_ms, seed, check)


@pytest.mark.parametrize("call_ms, lie", [(0.2, 2.0), (1.0, 1.5), (5.0, 10.0), (50.0, 1.3)])
def test_a_timer_that_reports_less_than_the_work_is_caught(call_ms: float, lie: float):
    n, _ = spin_size(call_ms, 0.07, 0.03)
    null, cand = spins(call_ms, n=n)
    check = judge_clock(null, cand, n=n, pad=1, reported_ms=call_ms / lie, tolerance=0.15)
    assert check.verdict == "inconsistent"
    assert check.device_low_ms == pytest.approx(call_ms, rel=0.1)
    assert f"{call_ms / lie:.4f} ms" in check.message(baseline_ms=call_ms * 3)


def test_a_call_below_the_clocks_jitter_is_unresolved_not_rejected():
    null, cand = [5.0, 5.4, 5.2], [5.1, 5.3, 5.6]  # the call's work is lost in the jitter
    check = judge_clock(null, cand, n=10, pad=1, reported_ms=0.001, tolerance=0.15)
    assert check.verdict == "unresolved" and check.device_low_ms is None and check.floor_ms is None


def test_noise_is_read_in_the_candidates_favour_and_one_stall_does_not_void_the_bound():
    """The fastest candidate spin against a null level past the nulls' spread; a stall in one null round
    (which only ever adds time) neither tightens the bound nor leaves the call unresolved."""
    check = judge_clock([10.0, 10.2, 10.1], [30.0, 31.0, 32.0], n=10, pad=1, reported_ms=1.95, tolerance=0.0)
    assert check.verdict == "consistent" and check.device_low_ms < (30.0 - 10.1) / 10
    stalled = judge_clock([10.0, 10.1, 140.0], [130.0, 131.0, 130.5], n=11, pad=6, reported_ms=10.0 / 1.5,
                          tolerance=0.15)
    assert stalled.verdict == "inconsistent", "a 1.5x lie at 10 ms, one null round stalled by 130 ms"
    assert stalled.device_low_ms == pytest.approx(10.9, abs=0.2)


def test_a_timer_claiming_work_the_clock_would_have_seen_is_not_unresolved():
    """Walls with no more in the candidate's spins than in the null ones: a timer claiming 5 ms per call
    (55 ms per spin) contradicts the clock; one claiming 1 us per call (within the jitter) does not."""
    null, cand = [5.0, 5.4, 5.2], [5.1, 5.3, 5.6]
    claim = judge_clock(null, cand, n=11, pad=6, reported_ms=5.0, tolerance=0.15)
    assert claim.verdict == "inconsistent" and "no more device work" in claim.message(baseline_ms=7.5)
    assert judge_clock(null, cand, n=11, pad=6, reported_ms=0.001, tolerance=0.15).verdict == "unresolved"


def test_spins_pad_past_the_host_time_and_fit_their_length():
    n, pad = spin_size(call_ms=0.01, flush_ms=0.065, host_ms=0.2)
    host_per_iteration = 0.2 + pad * 0.01  # the call, and queueing the pad itself
    assert pad * 0.065 >= 1.5 * host_per_iteration and 5 <= n <= 2000
    assert n * (pad * 0.065 + 0.01) == pytest.approx(120.0, rel=0.05)
    assert spin_size(call_ms=50.0, flush_ms=0.065, host_ms=0.02) == (5, 1)  # long calls: the fewest spins


@pytest.mark.parametrize("cand, base, expect", [(50.0, 50.0, MIN_REPS), (0.01, 0.01, MAX_REPS),
                                                (4.0, 4.0, int(TIME_BUDGET_MS / 8.0))])
def test_repetitions_fit_the_time_budget(cand: float, base: float, expect: int):
    assert choose_reps(cand, base) == expect


def test_chunks_cover_every_repetition_once_in_at_least_four_parts():
    for reps, per_rep in [(10, 50.0), (200, 0.1), (37, 1.0)]:
        plan = chunk_plan(reps, per_rep)
        assert [r for block in plan for r in block] == list(range(reps))
        assert len(plan) >= min(4, reps)


@dataclass
class FakeWorker:
    """A worker that answers chunks with fixed times and records what it was asked."""

    ms: float
    asked: list[p.TimeChunk] = field(default_factory=list)

    def call(self, request: p.TimeChunk, reply: type) -> p.Chunk:
        self.asked.append(request)
        timed = [r for r in request.reps if r not in request.samples]
        time.sleep(self.ms * len(timed) / 1e3)  # the parent's clock around the chunk sees the work
        return p.Chunk(ms=[self.ms] * len(timed), fingerprints=[[0.0, 0.0, 0.0, 0.0]] * len(timed))


class FakeEvaluator:
    def __init__(self) -> None:
        self.rng = random.Random(7)

    def draw(self) -> int:
        return self.rng.getrandbits(62)

    def fraction(self) -> float:
        return self.rng.random()


def test_both_sides_are_asked_for_the_same_repetitions_on_the_same_inputs_in_abba_order():
    cand_w, base_w = FakeWorker(0.5), FakeWorker(1.0)
    ready = p.TimeReady(call_ms=0.5, host_ms=0.02, flush_ms=0.07)
    run = _interleave(FakeEvaluator(), cand_w, base_w, ready, p.TimeReady(call_ms=1.0, flush_ms=0.07))
    samples = {r for c in cand_w.asked for r in c.samples}
    assert 1 <= len(samples) <= 3 and not any(c.samples for c in base_w.asked), "only the candidate is sampled"
    cand_reps = [(r, s) for c in cand_w.asked for r, s in zip(c.reps, c.seeds, strict=True) if r not in samples]
    base_reps = [(r, s) for c in base_w.asked for r, s in zip(c.reps, c.seeds, strict=True)]
    assert cand_reps == base_reps, "same repetition numbers, same input seeds, same order"
    assert run.cand_ms == [0.5] * len(base_reps) and run.base_ms == [1.0] * len(base_reps)
    assert len(cand_w.asked) == len(base_w.asked) >= 4


def test_a_chunk_that_reports_more_time_than_it_took_is_refused():
    class Boastful(FakeWorker):
        def call(self, request, reply):
            out = super().call(request, reply)
            out.ms = [1e4] * len(out.ms)
            return out

    ready = p.TimeReady(call_ms=0.5, flush_ms=0.07)
    run = _interleave(FakeEvaluator(), FakeWorker(0.5), Boastful(1.0), ready, ready)
    assert run.findings and run.findings[0].check == "timing-inconsistent"
    assert "more than the" in run.findings[0].message


def test_both_sides_pad_alike_past_the_faster_host_only():
    """A 10 us kernel behind 60 us of host code (the H200's figures): one flush (73 us) left the device
    idle inside the interval and read the call at 61 us; the padding covers the faster side's host time
    and is the same number on both sides. It does not cover the slower side's: ten launches behind 0.2 ms
    of host code then read as their device time alone, 0.12 ms where do_bench reads 0.20 ms, and a
    host-bound candidate would be credited a win it does not have."""
    cand_w, base_w = FakeWorker(0.01), FakeWorker(1.0)
    cand = p.TimeReady(call_ms=0.01, host_ms=0.06, flush_ms=0.073)
    base = p.TimeReady(call_ms=1.0, host_ms=0.2, flush_ms=0.073)
    run = _interleave(FakeEvaluator(), cand_w, base_w, cand, base)
    pads = {c.pad for c in cand_w.asked + base_w.asked}
    assert pads == {run.pad} and run.pad == flush_pad(0.06 + 2 * HOST_FLUSH_MS, 0.073)
    assert run.pad * 0.073 >= 1.5 * (0.06 + 2 * HOST_FLUSH_MS) > 0  # the faster host stays ahead
    assert run.pad * 0.073 < 0.2 + 2 * HOST_FLUSH_MS  # the slower one's extra host time is not hidden
    assert flush_pad(0.06, 0.073) == 2 and flush_pad(0.001, 0.073) == 1 and flush_pad(5.0, 0.073) == 32
