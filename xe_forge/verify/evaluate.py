"""The one evaluator everything uses: static checks here, then the two workers, then one Verdict.

`check`, `bench`, every CoVeR iteration and the final verification all go through
`Evaluator.evaluate`, so "correct" and "faster" mean the same thing everywhere. The parent holds
the secrets (seeds drawn after the candidate is imported) and decides; the reference process holds
the reference, the expected outputs and the comparisons; the candidate's process only runs the
candidate (docs/VERIFIER.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from xe_forge.problem.kernel import Problem
from xe_forge.problem.layouts import layout_order, unseen_layouts
from xe_forge.problem.spec import Spec
from xe_forge.targets import get_device, resolve_target
from xe_forge.verify import protocol as p
from xe_forge.verify.launch_record import one_sided_flags
from xe_forge.verify.models import CONSTANT_REFERENCE, CorrectnessReport, Finding, Verdict, Versus
from xe_forge.verify.sandbox import Worker, WorkerGone
from xe_forge.verify.seeds import SeedStream, run_secret
from xe_forge.verify.speed import measure_speed
from xe_forge.verify.static import check_source, launch_options
from xe_forge.verify.tiles import jit_tiles
from xe_forge.verify.trials import WARM_CALLS, Patched, ProblemBroken, ShapeCheck, WorkerFault, answer

CPU_SPEED_NOTE = "speed not measured: the CPU runs Triton's interpreter (correctness only)"
NO_SPEC_ON_CPU = ("no spec: the interpreter runs the shapes get_inputs() makes, which for KernelBench problems "
                  "can take hours on a CPU; add a spec with a small `ci` variant (see examples/)")
EXIT_GRACE_S = 3.0  # how long closing waits for the workers to exit on their own, all together
AUDIT_CHECKS = {"torch-compute", "device-to-host", "host-compute", "gpu-kernels", "torch-budget", "host-subset"}


class Evaluator:
    """Owns a warm reference process and a warm candidate process for one device."""

    def __init__(self, device: str = "auto", target: str | None = None, *, timeout: float = 300.0,
                 trials: int = 3, seed: int | None = None, workdir: Path | None = None, kb: Any = None,
                 cpu_timing: bool = False) -> None:
        """`seed` makes the draws reproducible (tests, reproducing a report); by default they are secret, and
        with a `workdir` the same for the same candidate when a run is resumed (seeds.py).
        `cpu_timing` runs the timing protocol through the interpreter (figures meaningless; for tests)."""
        self.timeout = timeout
        self.trials = trials
        self.cpu_timing = cpu_timing
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="xe-forge-")
        # absolute: the workers run in their own temporary directories
        self.workdir = (Path(workdir) if workdir else Path(self._tmp.name)).resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        # the workers resolve `device` and `target` as this process does (targets.get_device), so they start
        # before it imports torch: their start-up (torch, the device context: seconds on a GPU host) overlaps
        # this process's own, the knowledge base's load and the caller reading its problem
        self.judge = Worker("judge", device, target or "", timeout=timeout, logdir=self.workdir)
        self.runner = Worker("runner", device, target or "", timeout=timeout, logdir=self.workdir)
        # the baseline is timed in a process of its own that never imports the candidate under test
        self.baseline = Worker("runner", device, target or "", timeout=timeout, logdir=self.workdir,
                               name="baseline")
        self.judge.start()
        self.runner.start()
        try:
            self.device = get_device(device, target)
            self.target = resolve_target(self.device, target)
            if kb is None:  # the target's constraints apply to every candidate, from any command
                from xe_forge.kb import load_kb

                kb = load_kb()
        except BaseException:  # a missing device or a broken knowledge base leaves no started worker behind
            for w in (self.judge, self.runner):
                w.kill()
            raise
        self.kb = kb
        self._secret = (hashlib.sha256(f"seed {seed}".encode()).digest() if seed is not None
                        else run_secret(self.workdir, persist=workdir is not None))
        self._seeds = SeedStream(self._secret, "idle")
        self.worker = self.runner  # the process a candidate can break (kept for callers that count restarts)
        self.transfer = transfer_dir(self.workdir)
        self._budgets: dict[tuple[str, str, str], dict[str, float] | None] = {}
        self.stem = "kernel"  # the problem's kernel file's stem: what candidates are imported as (source_file)
        self.warm_calls = WARM_CALLS  # the range of the late call's index (trials.py; tests of timing set (0, 1))
        self.runtime_subset = True  # kernel files run with the host subset's builtins (tests switch it off)

    def draw(self) -> int:
        """A seed nobody else knows (unless the evaluator was given one)."""
        return self._seeds.draw()

    def fraction(self) -> float:
        return self._seeds.fraction()

    @property
    def measures_speed(self) -> bool:
        return self.device.measures_speed

    def warnings_for(self, problem: Problem) -> list[str]:
        """What the user should know before a long run on this device."""
        return [NO_SPEC_ON_CPU] if problem.spec is None and not self.measures_speed else []

    def close(self) -> None:
        """Ask every worker to exit, then kill what is left after a grace shared by all: a worker holds
        nothing to save (on an H100 a check that failed waited 10 s here for one worker that did not
        exit; a worker's profile, XE_FORGE_WORKER_PROFILE, is written as it leaves its loop, before that)."""
        workers = (self.runner, self.baseline, self.judge)
        for w in workers:  # each tears its device context down at the same time as the others
            w.ask_exit()
        deadline = time.monotonic() + EXIT_GRACE_S
        for w in workers:
            w.close(timeout=deadline - time.monotonic())
        shutil.rmtree(self.transfer, ignore_errors=True)
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:  # an error (a missing file, Ctrl-C): the workers are killed, not waited for
            for w in (self.runner, self.baseline, self.judge):
                w.kill()
        self.close()

    # ------------------------------------------------------------------ static

    def static_findings(self, source: str, allow_torch: Iterable[str]) -> list[Finding]:
        """AST checks, then the target's constraints (knowledge base, else the toolchain's option rules)."""
        result = check_source(source, allow=allow_torch)
        findings = list(result.findings)
        if findings:
            return findings
        return self._constraint_findings(source)

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
                 compile_baseline: bool = False, versus: Sequence[Versus] = (), name: str = "candidate") -> Verdict:
        """Verify one candidate source: static, correctness (+unseen), and timing where the device can.
        `versus`: more baselines timed against the candidate in the same run (one that cannot be timed is
        a note, not a failure)."""
        started = time.monotonic()
        before = self._spent()
        self.stem = problem.kernel.path.stem if problem.kernel.path.stem.isidentifier() else "kernel"
        allowed = sorted({a.strip() for a in allow_torch if a.strip()})
        base = dict(device=self.device.kind, speed_note=self._speed_note())
        findings = self.static_findings(source, allowed)
        if findings:
            return Verdict(passed=False, stage_failed="static", findings=findings, seconds=time.monotonic() - started,
                           **base)
        timed = (self.measures_speed or self.cpu_timing) if time_it is None else (
            time_it and (self.measures_speed or self.cpu_timing))
        folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.transfer))
        try:
            verdict = self._evaluate(source, problem, allowed, folder, unseen=unseen, full=full, timed=timed,
                                     baseline_source=baseline_source, compile_baseline=compile_baseline,
                                     versus=versus, name=name)
        except (ProblemBroken, Patched, WorkerGone, WorkerFault) as exc:
            verdict = failure_verdict(exc, **base)
        finally:
            self.runner.fence()
            self.baseline.fence()
            with contextlib.suppress(WorkerGone, OSError):
                self.judge.call(p.Release(dir=str(folder)), p.Released)
            shutil.rmtree(folder, ignore_errors=True)
        verdict.seconds = time.monotonic() - started
        spent = {k: v - before.get(k, 0.0) for k, v in self._spent().items()}
        verdict.phase_seconds = {k: round(v, 3) for k, v in sorted(spent.items(), key=lambda kv: -kv[1]) if v >= 0.001}
        return verdict

    def _spent(self) -> dict[str, float]:
        waited = {f"device lock {mode}": s for mode, s in self.device.lock().waited.items()}  # other processes
        return {**self.judge.spent, **self.runner.spent, **self.baseline.spent, **waited}

    def _evaluate(self, source: str, problem: Problem, allowed: list[str], folder: Path, *, unseen: bool, full: bool,
                  timed: bool, baseline_source: str | None, compile_baseline: bool, versus: Sequence[Versus],
                  name: str) -> Verdict:
        base = dict(device=self.device.kind, speed_note=self._speed_note())
        self.judge.start()
        self.runner.start()
        if timed:  # its start-up overlaps the correctness checks
            self.baseline.start()
        loaded = answer(self.judge.call(p.Load(reference_path=str(problem.reference.path),
                                               spec=problem.spec.model_dump(mode="json") if problem.spec else None,
                                               variant=problem.variant,
                                               precision=problem.precision_policy()),
                                        p.Loaded))
        if loaded.bad_input or loaded.main is None:
            raise ProblemBroken(loaded.bad_input or "the reference cannot be loaded")
        imported = self.runner.call(p.Import(path=str(self.source_file(source, name)), role="candidate",
                                               subset=self.runtime_subset), p.Imported)
        if imported.patched:
            raise Patched(imported.patched, stage="import")
        answer(imported)
        if imported.failure:
            return Verdict(passed=False, stage_failed="import", **base,
                           findings=[Finding(check="import", line=imported.line,
                                             message=f"the candidate does not import: {imported.failure}")])
        # every seed is drawn from here on, after the candidate's import
        self._seeds = SeedStream(self._secret, source, str(problem.reference.path), loaded.model_dump_json())
        check = ShapeCheck(self.judge, self.runner, folder, loaded, allowed,
                           kernel_list=self.device.kind == "cuda" and full,  # a profiler session per shape
                           input_budget=self._budget_for(problem, source, folder, allowed), draw=self.draw,
                           warm_calls=self.warm_calls)
        lock = self.device.lock()  # other xe-forge processes on this GPU: never a kernel during a timed section
        with lock.shared():
            order = layout_order(self.draw())  # secret: which non-contiguous layout is shown at which shape
            reports = [check.run(loaded.main, trials=self.trials, full=full, layout=order[0])]
            if reports[0].passed and unseen:
                tiles = sorted(set(reports[0].tiles) | jit_tiles(source))  # the kernel's own blocks and loop steps
                planned = answer(self.judge.call(p.PlanUnseen(tiles=tiles, seed=self.draw()), p.Planned))
                reports[0].frozen, reports[0].tiles = planned.frozen, tiles
                bare = self.draw() % max(len(planned.shapes), 1)  # one shape, in secret, with unpoisoned memory
                layouts = unseen_layouts(order, len(planned.shapes))
                for i, (info, layout) in enumerate(zip(planned.shapes, layouts, strict=True)):
                    reports.append(self._unseen(check, info, loaded, layout, unpoisoned=i == bare))
                    if not reports[-1].passed:
                        break
        verdict = _verdict(reports, **base)
        verdict.notes = self._notes(source, loaded, reports, problem.spec)
        shown = [f"{r.variant}" + (" trial 1" if i == 0 else "") + f": {lay}" for i, (r, lay) in
                 enumerate(zip(reports, [order[0], *unseen_layouts(order, len(reports) - 1)], strict=True))
                 if lay and (i or len(r.trials) > 1)]
        if shown:
            verdict.notes.append("non-contiguous inputs (" + "; ".join(shown) + ")")
        if verdict.passed and timed:
            with lock.exclusive():
                measure_speed(self, verdict, check, problem, loaded, baseline_source=baseline_source,
                              compile_baseline=compile_baseline, versus=versus)
        return verdict

    @staticmethod
    def _unseen(check: ShapeCheck, info: p.ShapeInfo, loaded: p.Loaded, layout: str | None, *,
                unpoisoned: bool = False) -> CorrectnessReport:
        """One unseen shape, its inputs in `layout` (None: contiguous), its compared call unpoisoned when
        asked; a crash there (a kernel writing past a smaller buffer) is that shape's failure."""
        try:
            return check.run(info, trials=1, full=False, layout=layout, unpoisoned=unpoisoned)
        except WorkerGone as gone:
            return CorrectnessReport(variant=info.label, dtype=loaded.dtype, rtol=loaded.rtol, atol=loaded.atol,
                                     unseen=True, dims=dict(info.dims),
                                     findings=[Finding(check="worker", message=f"{info.label}: {gone}")])

    def _notes(self, source: str, loaded: p.Loaded, reports: list[CorrectnessReport],
               spec: Spec | None) -> list[str]:
        notes = [n for r in reports for n in r.notes]
        flags = reports[0].degenerate
        everywhere = [f for f in flags if not f.endswith(" weights")]
        if everywhere:
            notes.append("the reference is degenerate at every weights tried (" + "; ".join(everywhere) + "): "
                         "passing says little about a kernel, and its speedup means little")
        elif any(f.endswith("at the initial weights") for f in flags):
            notes.append("the reference is degenerate at its initial weights (" + "; ".join(flags) + "): the "
                         "absolute tolerance judges there, and the trials at perturbed weights carry the decision")
        steps = spec.multiple_of if spec is not None else {}
        if steps:
            notes.append("unseen shapes keep " + ", ".join(f"{d} a multiple of {m}" for d, m in steps.items())
                         + " (the spec's multiple_of: sizes the kernel declares it needs)")
        if reports[0].tiles and len(reports) > 1:
            notes.append("unseen shapes cross the kernel's own tiles (" + ", ".join(map(str, reports[0].tiles[-6:]))
                         + ") where the size bound allows")
        notes += one_sided_flags(reports)
        frozen = reports[0].frozen
        if frozen:
            notes.append("unseen shapes keep " + "; ".join(f"{k} fixed ({why})" for k, why in frozen.items()))
        return list(dict.fromkeys(notes))

    def _budget_for(self, problem: Problem, source: str, folder: Path, allowed: list[str]):
        """The torch work the input kernel itself delegates, measured lazily per shape (None: no cap)."""
        input_source = problem.kernel.source
        if input_source == source or problem.reference_is_self:
            return None
        digest = hashlib.sha256(input_source.encode()).hexdigest()[:16]

        def budget(shape: str, prep: p.Prepared) -> dict[str, float] | None:
            key = (digest, str(problem.reference.path), shape)
            if key not in self._budgets:
                self._budgets[key] = self._measure_input(input_source, prep, folder, allowed)
            return self._budgets[key]

        return budget

    def _measure_input(self, input_source: str, prep: p.Prepared, folder: Path,
                       allowed: list[str]) -> dict[str, float] | None:
        imported = answer(self.runner.call(p.Import(path=str(self.source_file(input_source, "input")), role="input"),
                                           p.Imported))
        if imported.failure:
            return None
        first = next(iter(prep.inputs))
        call = p.CallPlan(id="budget", state=next(iter(prep.states.values())), inputs=prep.inputs[first],
                          output=str(folder / "budget_out.pt"))
        ran = answer(self.runner.call(p.Run(role="input", init=prep.init, seed=self.draw(), calls=[call],
                                            allowed=allowed), p.Ran))
        if ran.build_failure or not ran.calls or ran.calls[0].failure:
            return None
        return ran.calls[0].audit.allowed_families

    def source_file(self, source: str, name: str) -> Path:
        """The source as a file in the work directory (Triton's @jit needs a real file to import), named as
        the problem's kernel file is: the worker imports it under that stem, as production would."""
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        path = self.workdir / f"{name}_{digest}" / f"{self.stem}.py"
        path.parent.mkdir(exist_ok=True)
        if not path.exists():
            path.write_text(source, encoding="utf-8")  # as the static check read it
        return path

    def _speed_note(self) -> str:
        return "" if self.measures_speed else CPU_SPEED_NOTE


TRANSFER_ROOT = Path("/dev/shm")  # tensors between the processes travel through memory, not the disk
TRANSFER_FREE_BYTES = 8 << 30


def transfer_dir(workdir: Path) -> Path:
    """Where an evaluation's tensor files go: a private folder in shared memory when there is room
    (large outputs at KernelBench shapes are hundreds of MB each), else the work directory."""
    root = workdir
    with contextlib.suppress(OSError):
        if TRANSFER_ROOT.is_dir() and shutil.disk_usage(TRANSFER_ROOT).free >= TRANSFER_FREE_BYTES:
            root = TRANSFER_ROOT
    return Path(tempfile.mkdtemp(prefix="xe-forge-transfer-", dir=root))


def failure_verdict(exc: Exception, **base: Any) -> Verdict:
    """The verdict for an evaluation that ended early: a broken problem, a patch, a worker lost or faulting."""
    if isinstance(exc, ProblemBroken):
        return Verdict(passed=False, stage_failed="input", bad_input=True, findings=[Finding(check="input",
                                                                                            message=str(exc))], **base)
    if isinstance(exc, Patched):
        shown = ", ".join(exc.names[:5]) + (f" and {len(exc.names) - 5} more" if len(exc.names) > 5 else "")
        return Verdict(passed=False, stage_failed=exc.stage, **base,
                       findings=[Finding(check="monkey-patch", message=f"the candidate rebound {shown} in its process: "
                                         "patching torch, triton or the harness is not allowed")])
    if isinstance(exc, WorkerFault):
        return Verdict(passed=False, stage_failed="worker", **base,
                       findings=[Finding(check="worker", message=f"internal error in a worker: {exc}",
                                         hint=exc.trace[-800:])])
    return Verdict(passed=False, stage_failed="worker", findings=[Finding(check="worker", message=str(exc))], **base)


def _verdict(reports: list[CorrectnessReport], **base: Any) -> Verdict:
    if reports and CONSTANT_REFERENCE in reports[0].degenerate:
        return Verdict(passed=False, stage_failed="unverifiable", correctness=reports, **base, findings=[Finding(
            check="unverifiable", message="cannot verify: the reference's output is the same for every input and "
            "weights tried, so a kernel that writes that constant is indistinguishable from one that computes it",
            hint="check the problem itself (KernelBench has such degenerate references)")])
    for report in reports:
        if not report.passed:
            found = (report.findings or _first_trial_findings(report)
                     or [Finding(check="correctness", message=_mismatch_message(report))])
            return Verdict(passed=False, stage_failed=_stage_of(report), findings=found, correctness=reports, **base)
    return Verdict(passed=True, correctness=reports, **base)


def _stage_of(report: CorrectnessReport) -> str:
    """Unseen shapes fail at `unseen`; otherwise the first finding names the stage."""
    first = report.findings[0].check if report.findings else "correctness"
    if report.unseen:
        return "unseen"
    if first in ("launch", "ghost"):
        return first
    return "audit" if first in AUDIT_CHECKS else "correctness"


def _first_trial_findings(report: CorrectnessReport) -> list[Finding]:
    """Named failures of the first failing trial (input-mutation, stale-output), keeping their check names."""
    first_failed = next((t for t in report.trials if not t.passed), None)
    return list(first_failed.findings) if first_failed is not None else []


def _mismatch_message(report: CorrectnessReport) -> str:
    for trial in report.trials:
        for c in trial.comparisons:
            if not c.passed:
                detail = c.note or f"max_abs_err {c.max_abs_err:.3g}, {c.mismatches}/{c.numel} elements off"
                return (f"{report.variant} {trial.label} ({trial.weights} weights, {trial.inputs} inputs) {c.name}: "
                        f"{detail} (rtol={report.rtol}, atol={report.atol})")
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
