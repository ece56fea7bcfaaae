"""The one evaluator everything uses: static checks here, then the worker, then one Verdict.

`check`, `bench`, every CoVeR iteration and the final verification all go through
`Evaluator.evaluate`, so "correct" and "faster" mean the same thing everywhere.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from xe_forge.problem.kernel import Problem
from xe_forge.targets import get_device, resolve_target
from xe_forge.verify.models import CorrectnessReport, Finding, Timing, Verdict
from xe_forge.verify.sandbox import Worker
from xe_forge.verify.static import check_source, launch_options

CPU_SPEED_NOTE = "speed not measured: the CPU runs Triton's interpreter (correctness only)"
NO_SPEC_ON_CPU = ("no spec: the interpreter runs the shapes get_inputs() makes, which for KernelBench problems "
                  "can take hours on a CPU; add a spec with a small `ci` variant (see examples/)")


class Evaluator:
    """Owns one warm worker for one device; evaluates candidates against a problem's reference."""

    def __init__(self, device: str = "auto", target: str | None = None, *, timeout: float = 300.0,
                 trials: int = 3, seed: int = 0, workdir: Path | None = None, kb: Any = None) -> None:
        self.device = get_device(device, target)
        self.target = resolve_target(self.device, target)
        self.timeout = timeout
        self.trials = trials
        self.seed = seed
        if kb is None:  # the target's constraints apply to every candidate, from any command
            from xe_forge.kb import load_kb

            kb = load_kb()
        self.kb = kb
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="xe-forge-")
        # absolute: the worker runs in its own temporary directory
        self.workdir = (Path(workdir) if workdir else Path(self._tmp.name)).resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.worker = Worker(self.device.kind, self.target, timeout=timeout)

    @property
    def measures_speed(self) -> bool:
        return self.device.measures_speed

    def warnings_for(self, problem: Problem) -> list[str]:
        """What the user should know before a long run on this device."""
        return [NO_SPEC_ON_CPU] if problem.spec is None and not self.measures_speed else []

    def close(self) -> None:
        self.worker.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ static

    def static_findings(self, source: str, allow_torch: Iterable[str]) -> list[Finding]:
        """AST checks, then the target's constraints (knowledge base, else the toolchain's option rules)."""
        result = check_source(source, allow=allow_torch)
        findings = list(result.findings)
        if findings:
            return findings
        findings += self._constraint_findings(source)
        return findings

    def _constraint_findings(self, source: str) -> list[Finding]:
        toolchain = getattr(self.device, "target_toolchain", self.device.toolchain)()
        if self.kb is not None:
            from xe_forge.kb import check_constraints

            return [Finding(check="constraint", line=v.line, message=v.message)
                    for v in check_constraints(source, target=self.target, toolchain=toolchain, kb=self.kb)]
        out = []
        for line, opts in launch_options(source):
            for problem in self.device.validate_launch_options(opts):
                out.append(Finding(check="launch-option", line=line, message=problem.message))
        return out

    # ------------------------------------------------------------------ evaluate

    def evaluate(self, source: str, problem: Problem, *, allow_torch: Iterable[str] = (), unseen: bool = False,
                 baseline_source: str | None = None, time_it: bool | None = None, full: bool = True,
                 compile_baseline: bool = False, name: str = "candidate") -> Verdict:
        """Verify one candidate source: static, correctness (+unseen), and timing where the device can."""
        started = time.monotonic()
        allow_torch = {a for a in allow_torch if a.strip()}
        findings = self.static_findings(source, allow_torch)
        if findings:
            return Verdict(passed=False, stage_failed="static", findings=findings, device=self.device.kind,
                           speed_note=self._speed_note(), seconds=time.monotonic() - started)
        job = {
            "candidate_path": str(self._write(source, name)),
            "reference_path": str(problem.reference.path),
            "baseline_path": str(self._write(baseline_source, "baseline")) if baseline_source else None,
            "spec": problem.spec.model_dump(mode="json") if problem.spec else None,
            "variant": problem.variant, "precision": problem.spec.precision if problem.spec else "keep",
            "trials": self.trials, "seed": self.seed, "unseen": unseen, "full": full,
            "time": self.measures_speed if time_it is None else (time_it and self.measures_speed),
            "compile_baseline": compile_baseline,
            "audit_torch": not allow_torch,
        }
        raw = self.worker.run(job)
        verdict = self._verdict(raw)
        verdict.seconds = time.monotonic() - started
        return verdict

    def _write(self, source: str, name: str) -> Path:
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        path = self.workdir / f"{name}_{digest}.py"
        if not path.exists():
            path.write_text(source)
        return path

    def _speed_note(self) -> str:
        return "" if self.measures_speed else CPU_SPEED_NOTE

    def _verdict(self, raw: dict[str, Any]) -> Verdict:
        base = dict(device=self.device.kind, speed_note=self._speed_note())
        if "crash" in raw:
            return Verdict(passed=False, stage_failed="worker", findings=[Finding(check="worker", message=raw["crash"])],
                           **base)
        if "error" in raw:
            return Verdict(passed=False, stage_failed="worker",
                           findings=[Finding(check="worker", message=f"internal error in the worker: {raw['error']}",
                                             hint=raw.get("traceback", "")[-800:])], **base)
        reports = [CorrectnessReport(**r) for r in raw.get("correctness", [])]
        findings = [Finding(**f) for f in raw.get("findings", [])]
        if raw.get("bad_input"):
            return Verdict(passed=False, stage_failed="input", findings=findings, correctness=reports,
                           bad_input=True, **base)
        if findings:
            return Verdict(passed=False, stage_failed=raw.get("stage_failed", "import"), findings=findings,
                           correctness=reports, **base)
        for i, report in enumerate(reports):
            if not report.passed:
                stage = "unseen" if i > 0 else _stage_of(report)
                found = (report.findings or _first_trial_findings(report)
                         or [Finding(check="correctness", message=_mismatch_message(report))])
                return Verdict(passed=False, stage_failed=stage, findings=found, correctness=reports, **base)
        timings = raw.get("timing") or {}
        parsed = {k: Timing(**v) for k, v in timings.items()}
        timing = next(iter(parsed.values()), None)
        return Verdict(passed=True, correctness=reports, timing=timing, timings=parsed,
                       speed_measured=timing is not None, **base)


def _stage_of(report: CorrectnessReport) -> str:
    checks = {f.check for f in report.findings}
    if checks & {"ghost", "torch-compute"}:
        return "ghost"
    if "launch" in checks:
        return "launch"
    return "correctness"


def _first_trial_findings(report: CorrectnessReport) -> list[Finding]:
    """Named failures of the first failing trial (input-mutation, stale-output), keeping their check names."""
    first_failed = next((t for t in report.trials if not t.passed), None)
    return list(first_failed.findings) if first_failed is not None else []


def _mismatch_message(report: CorrectnessReport) -> str:
    for trial in report.trials:
        for c in trial.comparisons:
            if not c.passed:
                detail = c.note or f"max_abs_err {c.max_abs_err:.3g}, {c.mismatches}/{c.numel} elements off"
                return f"{report.variant} {trial.label} {c.name}: {detail} (rtol={report.rtol}, atol={report.atol})"
    return f"{report.variant}: failed"


def declared_allowance(problem: Problem, extra: Iterable[str] = ()) -> set[str]:
    """Torch ops the problem's spec (`allow_torch`) and the user (`--allow-torch`) let a kernel keep."""
    declared = set(problem.spec.allow_torch) if problem.spec else set()
    return declared | {e.strip() for e in extra if e.strip()}


def input_allowance(problem: Problem, extra: Iterable[str] = ()) -> set[str]:
    """What the input kernel already delegates to torch (a first port may keep cuDNN), plus the declared."""
    from xe_forge.verify.static import torch_ops_of

    return torch_ops_of(problem.kernel.source) | declared_allowance(problem, extra)


def allowance_from_file(path: Path) -> set[str]:
    from xe_forge.problem.kernel import read_source
    from xe_forge.verify.static import torch_ops_of

    return torch_ops_of(read_source(path, "baseline").source)


__all__ = ["Evaluator", "allowance_from_file", "declared_allowance", "input_allowance"]
