"""Timing, seen from the parent: the candidate and its baseline each in their own process, then only
what checks out is believed.

Kernels must be timed where they are launched, so the figures come from worker processes running the
same harness code (timing.py): the candidate's process, and a baseline process that never imports
the candidate under test. The parent alternates short chunks of repetitions between them (ABBA), both
drawing each repetition's inputs from the same secret seed, and pairs them by repetition. Then:
- each chunk's reported times must fit inside the parent's clock around that chunk;
- a secret sample of the candidate's timed outputs is checked by the reference process through its
  fingerprint, and a few secret repetitions ran under the full harness (audited, kept whole, compared);
- where the candidate comes out faster, the parent's own clock, around padded spins in the candidate's
  process, must have seen no less device work than the timer reports for it (clock.py states the rule).
Any failure fails the verdict at stage `timing`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xe_forge.problem.kernel import Problem
from xe_forge.verify import protocol as p
from xe_forge.verify.clock import HOST_FLUSH_MS, ClockCheck, flush_pad, judge_clock, spin_size
from xe_forge.verify.models import Finding, Timing, Verdict, Versus
from xe_forge.verify.timing import summarize
from xe_forge.verify.trials import ShapeCheck, answer, merge_audits

SAMPLES = 3  # timed repetitions of the candidate run under the full harness and compared in full
FINGERPRINT_CHECKS = 16  # timed outputs whose fingerprint the reference process checks, chosen after the fact
POOL = 3  # inputs the warm-up and the spins rotate through
TIME_BUDGET_MS = 800.0  # device time for one side-by-side timing, both sides together
CHUNK_MS = 25.0  # device time of one chunk of repetitions of one side
MIN_REPS, MAX_REPS = 10, 200
ROUNDS = 3  # null and candidate spins each, alternating
SPIN_GROWTH, MAX_SPIN = 4, 8000  # a spin the clock cannot resolve is run once more, this much longer
WALL_SLACK_MS = 5.0  # pipe and Python overhead allowed around a chunk


def choose_reps(cand_ms: float, base_ms: float, flush_ms: float = 0.0, *, budget_ms: float = TIME_BUDGET_MS,
                lo: int = MIN_REPS, hi: int = MAX_REPS, pad: int = 1) -> int:
    """Repetitions that fit the time budget: long calls get few (at least `lo`), short ones many."""
    per_rep = max(cand_ms + base_ms + 2 * pad * flush_ms, 1e-3)
    return int(max(lo, min(hi, budget_ms / per_rep)))


def chunk_plan(reps: int, per_rep_ms: float, *, chunk_ms: float = CHUNK_MS) -> list[range]:
    """Consecutive repetitions in chunks of about chunk_ms, at least four chunks where there are reps."""
    size = int(max(1, min(chunk_ms / max(per_rep_ms, 1e-3), max(1, reps // 4))))
    return [range(i, min(i + size, reps)) for i in range(0, reps, size)]


@dataclass
class Interleaved:
    """Both sides' repetitions, paired by number, and the candidate's evidence."""

    cand_ms: list[float] = field(default_factory=list)
    base_ms: list[float] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    fingerprints: list[list[float]] = field(default_factory=list)
    samples: list[p.CompareItem] = field(default_factory=list)
    audits: list[p.CallResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    pad: int = 1  # cache flushes queued before each timed call, on both sides


def measure_speed(ev: Any, verdict: Verdict, check: ShapeCheck, problem: Problem, loaded: p.Loaded, *,
                  baseline_source: str | None, compile_baseline: bool, versus: Sequence[Versus] = ()) -> None:
    """Fill `verdict.timings` (first: the input kernel or eager, then the others in order) or fail the
    verdict at `timing`. The first side must be timed; a later one that cannot be (torch.compile failing
    on the reference, a lowering that breaks) is a note."""
    prep = check.prepared["main"]
    cand_w, base_w = ev.runner, ev.baseline
    for w in (cand_w, base_w):  # both draw the timed inputs as the reference process does
        answer(w.call(p.Import(path=str(problem.reference.path), role="reference"), p.Imported))
    first = Versus(label="input kernel", kind="input", source=baseline_source) if baseline_source is not None \
        else Versus(label="eager", kind="eager")
    sides = [first, *([Versus(label="torch.compile", kind="compile")] if compile_baseline else []), *versus]
    sides = list({s.label: s for s in reversed(sides)}.values())[::-1]  # each baseline once, first kept first
    template, pool = ev.draw(), [ev.draw() for _ in range(POOL)]

    def plan(side: p.Side) -> p.TimePrepare:
        return p.TimePrepare(side=side, init=prep.init, seed=check.cand_seed, state=prep.states["initial"],
                             spec=problem.spec.model_dump(mode="json") if problem.spec else None,
                             variant=problem.variant, dtype=loaded.dtype, template_seed=template, pool=pool,
                             sample_dir=str(check.folder), allowed=check.allowed)

    findings: list[Finding] = []
    cand = answer(cand_w.call(plan("candidate"), p.TimeReady))
    if cand.failure:
        findings.append(Finding(check="timing", message=f"the candidate cannot be timed: {cand.failure}"))
    clock: ClockCheck | None = None
    for side in sides if not findings else []:
        name = side.label
        base = _prepare_side(ev, base_w, side, plan)
        if base.failure and side is not first:
            verdict.notes.append(f"{name} could not be timed: {base.failure[:300]}")
            continue
        if base.failure:
            findings.append(Finding(check="timing", message=f"timing against {name} failed: {base.failure}"))
            break
        run = _interleave(ev, cand_w, base_w, cand, base)
        findings += run.findings or _outputs(ev, check, run, template)
        if findings:
            break
        timing = summarize(run.cand_ms, run.base_ms)
        if timing.faster and clock is None:  # a timer's lie matters where it makes a candidate win
            clock, spin_findings = _spins(ev, check, cand_w, cand, template)
            findings += spin_findings
            if findings:
                break
        if clock is not None:
            timing.clock = judge_clock(clock.null_wall_ms, clock.candidate_wall_ms, n=clock.n, pad=clock.pad,
                                       reported_ms=timing.candidate_ms, tolerance=clock.tolerance)
        if timing.clock is not None and timing.clock.verdict == "inconsistent":
            findings.append(Finding(check="timing-inconsistent", message=timing.clock.message(timing.baseline_ms)))
            break
        verdict.timings[name] = timing
    if findings:
        verdict.passed, verdict.stage_failed, verdict.findings = False, "timing", findings
        verdict.timings = {}
        return
    verdict.timing = next(iter(verdict.timings.values()), None)
    verdict.speed_measured = verdict.timing is not None and ev.measures_speed
    flops = problem.variant_entry().flops() if problem.spec is not None else None
    for t in verdict.timings.values():
        t.flops = flops


def _prepare_side(ev: Any, base_w: Any, side: Versus, plan: Any) -> p.TimeReady:
    """The baseline process builds and warms one side (a kernel side imports its source first)."""
    if side.kind == "input":
        imported = answer(base_w.call(p.Import(path=str(ev.source_file(side.source or "", "baseline")),
                                               role="baseline"), p.Imported))
        if imported.failure:
            return p.TimeReady(failure=f"the baseline kernel does not import: {imported.failure}")
    return answer(base_w.call(plan(side.kind), p.TimeReady))


def _interleave(ev: Any, cand_w: Any, base_w: Any, cand: p.TimeReady, base: p.TimeReady) -> Interleaved:
    """ABBA chunks of repetitions, each side in its own process; the parent's clock around each chunk."""
    # one padding for both sides, from the faster host: it hides the host time both sides share (the
    # loop's copy and marks, one launch), so a short call is not read at its host time; a side's own
    # extra host time (ten launches, Python around them) still counts against it, as do_bench counts
    # it. Padding past the slower host read ten 12 us launches at their device time, 0.12 ms, where
    # do_bench read 0.20 ms: a host-bound candidate would be credited a win it does not have.
    pad = flush_pad(min(cand.host_ms, base.host_ms) + 2 * HOST_FLUSH_MS, cand.flush_ms)
    reps = choose_reps(cand.call_ms, base.call_ms, cand.flush_ms, pad=pad)
    seeds = [ev.draw() for _ in range(reps)]
    samples = sorted({int(ev.fraction() * reps) % reps for _ in range(SAMPLES)}) if reps >= 3 * SAMPLES else []
    run = Interleaved()
    cand_ms: dict[int, float] = {}
    base_ms: dict[int, float] = {}
    per_rep = max(cand.call_ms, base.call_ms) + pad * cand.flush_ms
    run.pad = pad
    for j, block in enumerate(chunk_plan(reps, per_rep)):
        order = ("candidate", "baseline") if j % 2 == 0 else ("baseline", "candidate")
        for side in order:
            todo = [r for r in block if side == "candidate" or r not in samples]
            worker = cand_w if side == "candidate" else base_w
            request = p.TimeChunk(reps=todo, seeds=[seeds[r] for r in todo], pad=pad,
                                  samples=[r for r in todo if r in samples] if side == "candidate" else [])
            started = time.monotonic()
            chunk = answer(worker.call(request, p.Chunk))
            wall = (time.monotonic() - started) * 1e3
            if chunk.failure:
                run.findings.append(Finding(check="timing", message=f"timing the {side} failed: {chunk.failure}"))
                return run
            timed = [r for r in todo if r not in request.samples]
            if len(chunk.ms) != len(timed) or (side == "candidate" and len(chunk.fingerprints) != len(timed)):
                run.findings.append(Finding(check="timing-inconsistent", message=f"the {side}'s process answered "
                                                                                 "for other repetitions than asked"))
                return run
            if sum(chunk.ms) > wall + WALL_SLACK_MS:
                run.findings.append(Finding(check="timing-inconsistent", message=f"the {side}'s timed calls report "
                                            f"{sum(chunk.ms):.1f} ms, more than the {wall:.1f} ms the chunk took"))
                return run
            (cand_ms if side == "candidate" else base_ms).update(zip(timed, chunk.ms, strict=True))
            if side == "candidate":
                run.fingerprints += chunk.fingerprints
                run.seeds += [seeds[r] for r in timed]
                run.samples += chunk.samples
                run.audits += chunk.sample_audits
    paired = sorted(set(cand_ms) & set(base_ms))
    run.cand_ms, run.base_ms = [cand_ms[r] for r in paired], [base_ms[r] for r in paired]
    return run


def _outputs(ev: Any, check: ShapeCheck, run: Interleaved, template: int) -> list[Finding]:
    """The candidate's timed outputs as evidence: sampled calls audited and compared whole, a secret
    choice of fingerprints checked by the reference process."""
    out = []
    audit = merge_audits([a.audit for a in run.audits])
    failed = [a.failure for a in run.audits if a.failure]
    if failed or audit.torch_flops > 0 or audit.device_to_host or audit.host_exits or audit.foreign_kernels:
        what = failed[0] if failed else (", ".join(sorted(audit.refused_ops)) or "device-to-host copies or "
                                         "foreign GPU kernels")
        out.append(Finding(check="timed-audit", message=f"while timed, a sampled call did what checked calls did "
                                                        f"not: {what}"))
    if any(a.launches == 0 for a in run.audits):
        out.append(Finding(check="timed-audit", message="while timed, a sampled call launched no Triton kernel"))
    chosen = _secret_choice(ev, len(run.fingerprints), FINGERPRINT_CHECKS)
    verified = answer(ev.judge.call(p.CheckTimed(dir=str(check.folder), template_seed=template,
                                                 fingerprints=[run.fingerprints[i] for i in chosen],
                                                 seeds=[run.seeds[i] for i in chosen], samples=run.samples),
                                    p.TimedChecked))
    bad = len(verified.bad_fingerprints) + sum(not s.passed for s in verified.samples)
    if bad:
        out.append(Finding(check="timed-output", message=f"{bad} of {len(chosen) + len(run.samples)} timed calls "
                                                         "checked returned outputs that do not match the reference: "
                                                         "the kernel behaves differently while timed"))
    return out


def _secret_choice(ev: Any, total: int, k: int) -> list[int]:
    """k distinct indices of `total`, from the evaluator's secret stream (the candidate cannot know which)."""
    remaining = list(range(total))
    chosen = []
    while remaining and len(chosen) < k:
        chosen.append(remaining.pop(int(ev.fraction() * len(remaining)) % len(remaining)))
    return sorted(chosen)


def _spins(ev: Any, check: ShapeCheck, cand_w: Any, cand: p.TimeReady,
           template: int) -> tuple[ClockCheck, list[Finding]]:
    """ROUNDS of padded null and candidate spins under the parent's clock; the candidate's outputs checked.
    Spins that do not resolve the call's device work are run once more, SPIN_GROWTH times as long."""
    n, pad = spin_size(cand.call_ms, cand.flush_ms, cand.host_ms)
    findings: list[Finding] = []
    for attempt in range(2):
        walls = _spin_rounds(ev, check, cand_w, n, pad, template, findings if attempt == 0 else None)
        clock = ClockCheck(n=n, pad=pad, null_wall_ms=walls["null"], candidate_wall_ms=walls["candidate"],
                           tolerance=ev.device.clock_tolerance)
        seen = judge_clock(clock.null_wall_ms, clock.candidate_wall_ms, n=n, pad=pad, reported_ms=cand.call_ms,
                           tolerance=clock.tolerance).floor_ms
        if findings or (seen is not None and seen > 0) or n >= MAX_SPIN:
            break
        n = min(MAX_SPIN, n * SPIN_GROWTH)
    return clock, findings


def _spin_rounds(ev: Any, check: ShapeCheck, cand_w: Any, n: int, pad: int, template: int,
                 findings: list[Finding] | None) -> dict[str, list[float]]:
    """The walls of ROUNDS null and candidate spins; where `findings` is given, the first candidate
    spin's outputs are checked by the reference process."""
    walls: dict[str, list[float]] = {"null": [], "candidate": []}
    for r in range(ROUNDS):
        for which in (("null", "candidate") if r % 2 == 0 else ("candidate", "null")):
            started = time.monotonic()
            spun = answer(cand_w.call(p.Spin(which=which, n=n, pad=pad), p.Spun))
            walls[which].append((time.monotonic() - started) * 1e3)
            if which == "candidate" and r == 0 and findings is not None:
                verified = answer(ev.judge.call(p.CheckTimed(dir=str(check.folder), template_seed=template,
                                                             fingerprints=spun.fingerprints, seeds=spun.seeds),
                                                p.TimedChecked))
                if verified.bad_fingerprints or not spun.fingerprints:
                    findings.append(Finding(check="timed-output", message="calls timed by the parent's clock "
                                                                          "returned outputs that do not match the "
                                                                          "reference"))
    return walls


__all__ = ["measure_speed", "choose_reps", "chunk_plan", "Timing"]
