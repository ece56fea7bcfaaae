"""Timing, seen from the parent: ask the candidate's process to time, then believe only what checks out.

Kernels must be timed where they are launched, so the figures come from the candidate's process,
measured by harness code loaded before the candidate and watched by the patch guard. The parent
still checks them against what it can see itself:
- its own clock around the timed batch bounds the sum of every reported call;
- its own clock around three spins (candidate, baseline, an empty call, each n times through the
  same flush-and-sync path) gives a wall-clock speedup; a reported speedup well above it is a lie;
- every timed output's fingerprint, and the full outputs of secretly sampled calls (audited like a
  checked call), are compared with the reference by the reference process, which draws each timed
  call's fresh inputs from the same secret seed.
Any failure fails the verdict at stage `timing`.
"""

from __future__ import annotations

import time
from typing import Any

from xe_forge.problem.kernel import Problem
from xe_forge.verify import protocol as p
from xe_forge.verify.models import Finding, Verdict
from xe_forge.verify.timing import MAX_REPS
from xe_forge.verify.trials import ShapeCheck, answer, merge_audits

SAMPLES = 4  # timed repetitions whose candidate call is audited and kept in full
SPIN_MS = 40.0  # the parent's clock needs batches at least this long
WALL_SLACK_MS = 5.0  # pipe and Python overhead allowed around a batch
CLAIM_TOLERANCE = 0.25  # a reported speedup may exceed the wall-clock one by this much (clock noise)


def measure_speed(ev: Any, verdict: Verdict, check: ShapeCheck, problem: Problem, loaded: p.Loaded, *,
                  baseline_source: str | None, compile_baseline: bool) -> None:
    """Fill `verdict.timings` (first: the input kernel or eager) or fail the verdict at `timing`."""
    prep = check.prepared["main"]
    # the reference draws the timed inputs here too, and is the eager baseline
    answer(ev.runner.call(p.Import(path=str(problem.reference.path), role="reference"), p.Imported))
    sides = [("eager", "eager")]
    if baseline_source is not None:
        answer(ev.runner.call(p.Import(path=str(ev.source_file(baseline_source, "baseline")), role="baseline"),
                              p.Imported))
        sides = [("input kernel", "input")]
    if compile_baseline:
        sides.append(("torch.compile", "compile"))
    findings: list[Finding] = []
    template = ev.draw()
    for name, kind in sides:
        plan = p.TimePlan(init=prep.init, seed=check.cand_seed, state=prep.states["initial"],
                          spec=problem.spec.model_dump(mode="json") if problem.spec else None,
                          variant=problem.variant, dtype=loaded.dtype, template_seed=template,
                          seeds=[ev.draw() for _ in range(MAX_REPS)],
                          baseline=kind, samples=[ev.fraction() for _ in range(SAMPLES)],
                          sample_dir=str(check.folder), allowed=check.allowed)
        started = time.monotonic()
        timed = answer(ev.runner.call(plan, p.Timed))
        wall_ms = (time.monotonic() - started) * 1e3
        if timed.failure or timed.timing is None:
            findings.append(Finding(check="timing", message=f"timing against {name} failed: {timed.failure}"))
            break
        findings += _checked(ev, check, timed, wall_ms, name, template)
        if findings:
            break
        verdict.timings[name] = timed.timing
    if findings:
        verdict.passed, verdict.stage_failed, verdict.findings = False, "timing", findings
        verdict.timings = {}
        return
    verdict.timing = next(iter(verdict.timings.values()), None)
    verdict.speed_measured = verdict.timing is not None and ev.measures_speed
    flops = problem.variant_entry().flops() if problem.spec is not None else None
    for t in verdict.timings.values():
        t.flops = flops


def _checked(ev: Any, check: ShapeCheck, timed: p.Timed, wall_ms: float, name: str, template: int) -> list[Finding]:
    """Everything the parent can verify about a timing report; empty when it holds up."""
    out = []
    audit = merge_audits([a.audit for a in timed.sample_audits])
    failed = [a.failure for a in timed.sample_audits if a.failure]
    if failed or audit.torch_flops > 0 or audit.device_to_host or audit.host_exits or audit.foreign_kernels:
        what = failed[0] if failed else (", ".join(sorted(audit.refused_ops)) or "device-to-host copies or "
                                         "foreign GPU kernels")
        out.append(Finding(check="timed-audit", message=f"while timed, a sampled call did what checked calls did "
                                                        f"not: {what}"))
    if any(a.launches == 0 for a in timed.sample_audits):
        out.append(Finding(check="timed-audit", message="while timed, a sampled call launched no Triton kernel"))
    verified = answer(ev.judge.call(p.CheckTimed(dir=str(check.folder), template_seed=template,
                                                 fingerprints=timed.fingerprints, seeds=timed.seeds,
                                                 samples=timed.samples), p.TimedChecked))
    bad = len(verified.bad_fingerprints) + sum(not s.passed for s in verified.samples)
    if bad:
        out.append(Finding(check="timed-output", message=f"{bad} of {len(timed.fingerprints) + len(timed.samples)} "
                                                         "timed calls returned outputs that do not match the "
                                                         "reference: the kernel behaves differently while timed"))
    reported = sum(timed.candidate_ms) + sum(timed.baseline_ms)
    if reported > wall_ms + WALL_SLACK_MS:
        out.append(Finding(check="timing-inconsistent", message=f"the timed calls report {reported:.1f} ms, more "
                                                                f"than the {wall_ms:.1f} ms the batch took"))
    if not out:
        out += _wall_clock(ev, check, timed, name, template)
    return out


def _wall_clock(ev: Any, check: ShapeCheck, timed: p.Timed, name: str, template: int) -> list[Finding]:
    """The parent's own clock around n calls of each side: the speedup claimed must be plausible."""
    n = int(max(5, min(200, SPIN_MS / max(timed.per_call_ms, 1e-3))))
    walls = {}
    for which in ("null", "candidate", "baseline"):
        started = time.monotonic()
        spun = answer(ev.runner.call(p.Spin(which=which, n=n), p.Spun))
        walls[which] = (time.monotonic() - started) * 1e3
        if which == "candidate":
            verified = answer(ev.judge.call(p.CheckTimed(dir=str(check.folder), template_seed=template,
                                                         fingerprints=spun.fingerprints, seeds=spun.seeds),
                                            p.TimedChecked))
            if verified.bad_fingerprints:
                return [Finding(check="timed-output", message="calls timed by the parent's clock returned outputs "
                                                              "that do not match the reference")]
    claimed = timed.timing.speedup if timed.timing else 1.0
    bound = wall_speedup_bound(walls["candidate"], walls["baseline"], walls["null"], n)
    if claimed > max(1.0, bound) * (1 + CLAIM_TOLERANCE):
        return [Finding(check="timing-inconsistent", message=f"reported speedup {claimed:.2f}x against {name}, but the "
                                                             f"parent's clock allows at most {bound:.2f}x")]
    return []


def wall_speedup_bound(cand_ms: float, base_ms: float, null_ms: float, n: int) -> float:
    """The largest speedup the parent's wall clock is consistent with, reading the noise in its favour."""
    jitter = WALL_SLACK_MS
    cand = max(cand_ms - null_ms - jitter, 0.25 * max(cand_ms - null_ms, 0.0), 1e-3 * n)
    base = max(base_ms - null_ms + jitter, 0.0)
    return base / cand
