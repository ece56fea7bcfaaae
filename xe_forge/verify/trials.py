"""The correctness protocol of one shape, run by the parent across its two workers.

Per shape: the reference process prepares weights and inputs from secret seeds drawn here; the
candidate's process runs them; the reference process compares. Trials mix the initial weights with
weights moved off them, and the problem's own inputs with signed ones:

    trial 0: initial weights, the problem's inputs     same storage: initial, signed, t0's tensors
    trial 1: perturbed, signed                           trial 2: perturbed, the problem's inputs
    (trial k: initial when k % 3 == 0, signed when k is odd)  unseen shapes: perturbed, signed
    ghost replay: fresh inputs with every Triton launch a no-op; its output must not be right

A failure at perturbed weights where the initial ones pass is diagnosed parameter by parameter,
so the verdict names the parameter the kernel ignores.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from xe_forge.verify import protocol as p
from xe_forge.verify.models import AuditSummary, CorrectnessReport, Finding, TrialResult
from xe_forge.verify.sandbox import Worker, WorkerGone

MAX_DIAGNOSED = 16  # state entries tried one by one when a perturbed-weight trial fails


class ProblemBroken(Exception):
    """The reference cannot run: bad input, not the candidate's failure."""


class WorkerFault(Exception):
    """A worker's own error (not the candidate's): reported as an internal error."""

    def __init__(self, message: str, trace: str = "") -> None:
        super().__init__(message)
        self.trace = trace


class Patched(Exception):
    """The candidate's process saw torch, triton or the harness rebound: nothing measured there counts."""

    def __init__(self, names: list[str], stage: str = "correctness") -> None:
        super().__init__(", ".join(names))
        self.names, self.stage = names, stage


def seed() -> int:
    return secrets.randbits(62)


@dataclass
class Plan:
    id: str
    label: str
    weights: str
    dist: str
    reuse: str | None = None


def plans(trials: int, *, full: bool, unseen: bool) -> list[Plan]:
    if unseen:
        return [Plan("u0", "trial 0", "perturbed", "signed")]
    out = []
    for k in range(max(trials, 2) if full else max(trials, 1)):
        out.append(Plan(f"t{k}", f"trial {k}", "initial" if k % 3 == 0 else "perturbed",
                        "signed" if k % 2 else "problem"))
        if k == 0 and full:
            out.append(Plan("s0", "same storage, new values", "initial", "signed", reuse="t0"))
    return out


def answer(reply: p.Reply) -> p.Reply:
    """A reply as evidence: a patch voids it, a worker's own error is not the candidate's."""
    if reply.patched:
        raise Patched(reply.patched)
    if reply.error:
        raise WorkerFault(reply.error, reply.traceback)
    return reply


@dataclass
class ShapeCheck:
    """Everything one shape's check needs: workers, the transport folder, the allowance, the budget."""

    judge: Worker
    runner: Worker
    folder: Path
    loaded: p.Loaded
    allowed: list[str]
    kernel_list: bool
    input_budget: Callable[[str, p.Prepared], float | None] | None = None
    draw: Callable[[], int] = seed  # secret unless the evaluator was given a seed
    prepared: dict[str, p.Prepared] = field(default_factory=dict)  # shape key -> its last preparation

    def __post_init__(self) -> None:
        self.cand_seed = self.draw()

    def run(self, info: p.ShapeInfo, *, trials: int, full: bool) -> CorrectnessReport:
        todo = plans(trials, full=full, unseen=info.unseen)
        ghost_plan = Plan("ghost", "ghost replay", todo[0].weights, "problem") if full or info.unseen else None
        prep = self._prepare(info, todo + ([ghost_plan] if ghost_plan else []))
        report = CorrectnessReport(variant=info.label, dtype=self.loaded.dtype, rtol=self.loaded.rtol,
                                   atol=self.loaded.atol, unseen=info.unseen, dims=dict(info.dims))
        report.inputs = sorted({self.loaded.dists.get(prep.dists[t.id], prep.dists[t.id]) for t in todo})
        report.notes += prep.notes
        calls = [self._call(info, prep, t) for t in todo]
        if ghost_plan is not None:
            calls.append(p.CallPlan(id="ghost", state=prep.states[ghost_plan.weights], inputs=prep.inputs["ghost"],
                                    output=str(self.folder / f"{info.key}_out_ghost.pt"), ghost=True))
        ran = answer(self.runner.call(p.Run(init=prep.init, seed=self.cand_seed, calls=calls, allowed=self.allowed,
                                            kernel_list=self.kernel_list), p.Ran))
        if ran.build_failure:
            report.findings.append(Finding(check="runtime", line=ran.build_line,
                                           message=f"{info.label}: {ran.build_failure}"))
            return report
        results = {r.id: r for r in ran.calls}
        if set(results) != {c.id for c in calls}:
            self.runner.kill()
            raise WorkerGone("the candidate's process answered for other calls than it was asked; it was killed")
        items = [p.CompareItem(id=c.id, output=c.output, after=c.after) for c in calls
                 if results[c.id].failure is None]
        ghost = results.get("ghost")
        pairs = [(a, b) for a, b in (("t0", "s0"), ("t1", "t2")) if {a, b} <= {t.id for t in todo}]
        compared = answer(self.judge.call(p.Compare(dir=str(self.folder), items=items, degenerate=pairs if full else []),
                                          p.Compared))
        self._trials(report, todo, results, compared)
        self._launches_and_ghost(report, results, compared, ghost)
        self._audit(report, info, prep, [r for r in ran.calls])
        report.degenerate = compared.degenerate
        if _perturbed_only_failure(report):
            self._diagnose(report, info, prep, todo)
        return report

    def _prepare(self, info: p.ShapeInfo, todo: list[Plan], weights: dict[str, int] | None = None) -> p.Prepared:
        seeds = weights or {"weight": self.draw(), "perturb": self.draw()}
        self._seeds = seeds
        request = p.Prepare(shape=info.key, dir=str(self.folder), weight_seed=seeds["weight"],
                            perturb_seed=seeds["perturb"],
                            trials=[p.TrialPlan(id=t.id, weights=t.weights, dist=t.dist, seed=self.draw())
                                    for t in todo])
        prep = answer(self.judge.call(request, p.Prepared))
        if prep.bad_input:
            raise ProblemBroken(prep.bad_input)
        self.prepared[info.key] = prep
        return prep

    def _call(self, info: p.ShapeInfo, prep: p.Prepared, t: Plan) -> p.CallPlan:
        return p.CallPlan(id=t.id, state=prep.states[t.weights], inputs=prep.inputs[t.id], reuse=t.reuse,
                          output=str(self.folder / f"{info.key}_out_{t.id}.pt"),
                          after=str(self.folder / f"{info.key}_after_{t.id}.pt"))

    def _trials(self, report: CorrectnessReport, todo: list[Plan], results: dict[str, p.CallResult],
                compared: p.Compared) -> None:
        for t in todo:
            trial = TrialResult(label=t.label, passed=False, weights=t.weights, inputs=t.dist)
            call = results[t.id]
            if call.failure is not None:
                finding = Finding(check="runtime", line=call.line, message=f"{report.variant} {t.label}: {call.failure}")
                trial.findings.append(finding)
                report.findings.append(finding)
                report.trials.append(trial)
                return
            got = compared.results[t.id]
            trial.comparisons, trial.findings = got.comparisons, list(got.findings)
            trial.passed = got.passed
            if t.reuse and not got.passed and got.comparisons:
                trial.findings.append(Finding(check="stale-output", message="a second call on the same input storage "
                                              "with new values returned a wrong result (output cached on input "
                                              "identity?)"))
            report.trials.append(trial)

    def _launches_and_ghost(self, report: CorrectnessReport, results: dict[str, p.CallResult], compared: p.Compared,
                            ghost: p.CallResult | None) -> None:
        report.launches = max((r.launches for k, r in results.items() if k != "ghost"), default=0)
        if report.findings:
            return
        if report.launches == 0:
            report.findings.append(Finding(check="launch", message="forward launched no Triton kernel at run time",
                                           hint="the output must be computed by the file's own Triton kernels"))
            return
        if ghost is not None and "ghost" in compared.results:
            report.ghost_changed = not compared.results["ghost"].passed
            if not report.ghost_changed:
                report.findings.append(Finding(check="ghost", message="with its Triton kernels replaced by no-ops "
                                               "the candidate returns the same output: the kernels do not compute "
                                               "the result"))
        elif ghost is not None and ghost.failure is not None:
            report.ghost_changed = True  # raising without its kernels: they matter

    def _audit(self, report: CorrectnessReport, info: p.ShapeInfo, prep: p.Prepared,
               calls: list[p.CallResult]) -> None:
        summary = merge_audits([c.audit for c in calls])
        report.audit = summary
        where = report.variant
        if summary.torch_flops > 0:
            ops = ", ".join(f"{k} x{v}" for k, v in sorted(summary.refused_ops.items()))
            report.findings.append(Finding(check="torch-compute", message=f"{where}: at run time forward ran torch "
                                           f"compute outside Triton ({ops}; {summary.torch_flops:.3g} FLOP per call)",
                                           hint="compute it inside a @triton.jit kernel, or declare what the input "
                                                "kernel keeps in torch (--allow-torch, spec allow_torch)"))
        if summary.device_to_host:
            report.findings.append(Finding(check="device-to-host", message=f"{where}: forward copies device data to "
                                           f"the host ({', '.join(sorted(set(summary.device_to_host)))})",
                                           hint="keep scalars on the device: pass tensors to the kernel, not .item()"))
        if summary.host_exits:
            report.findings.append(Finding(check="host-compute", message=f"{where}: forward hands tensor data to host "
                                           f"Python ({', '.join(sorted(set(summary.host_exits)))}), where no audit "
                                           "sees what is computed", hint="keep the data in tensors and kernels"))
        if summary.foreign_kernels:
            report.findings.append(Finding(check="gpu-kernels", message=f"{where}: GPU kernels launched by neither a "
                                           f"Triton launch nor an allowed torch op: "
                                           f"{', '.join(summary.foreign_kernels[:5])}"))
        if summary.allowed_flops > 0 and self.input_budget is not None:
            budget = self.input_budget(info.key, prep)
            if budget is not None and summary.allowed_flops > budget * 1.001 + 1.0:
                report.findings.append(Finding(check="torch-budget", message=f"{where}: allowed torch ops ran "
                                               f"{summary.allowed_flops:.3g} FLOP per call, the input kernel "
                                               f"{budget:.3g}: only the work the input kernel delegates may stay "
                                               "in torch"))

    def _diagnose(self, report: CorrectnessReport, info: p.ShapeInfo, prep: p.Prepared, todo: list[Plan]) -> None:
        """Which state entry, moved alone, makes the candidate wrong: the parameter it ignores."""
        failed = next(t for t in todo if t.weights == "perturbed" and not _trial(report, t.label).passed)
        names = prep.params[:MAX_DIAGNOSED]
        probe = [Plan("d0", "initial", "initial", failed.dist)]
        probe += [Plan(f"d{i + 1}", name, f"perturbed:{name}", failed.dist) for i, name in enumerate(names)]
        sub = self.folder / f"{info.key}_diagnosis"
        sub.mkdir(exist_ok=True)
        shared_seed = self.draw()
        request = p.Prepare(shape=info.key, dir=str(self.folder), weight_seed=self._seeds["weight"],
                            perturb_seed=self._seeds["perturb"],
                            trials=[p.TrialPlan(id=t.id, weights=t.weights, dist=t.dist, seed=shared_seed)
                                    for t in probe])
        diag = answer(self.judge.call(request, p.Prepared))
        if diag.bad_input:
            return
        calls = [p.CallPlan(id=t.id, state=diag.states[t.weights], inputs=diag.inputs[t.id],
                            output=str(sub / f"out_{t.id}.pt")) for t in probe]
        ran = answer(self.runner.call(p.Run(init=diag.init, seed=self.cand_seed, calls=calls, allowed=self.allowed),
                                      p.Ran))
        if ran.build_failure:
            return
        items = [p.CompareItem(id=c.id, output=c.output) for c in calls[1:]]
        items += [p.CompareItem(id=c.id, name=f"same:{c.id}", output=c.output, against=calls[0].output)
                  for c in calls[1:]]
        compared = answer(self.judge.call(p.Compare(dir=str(self.folder), items=items), p.Compared))
        named, ignored = [], []
        for t in probe[1:]:
            result = compared.results.get(t.id)
            if result is not None and not result.passed:
                named.append(f"`{t.label}`")
                if compared.ghost_changed.get(f"same:{t.id}") is False:
                    ignored.append(f"`{t.label}`")
        if named:
            which = f"{named[0]} moves" if len(named) == 1 else f"any of {', '.join(named)} moves"
            message = (f"{report.variant}: wrong once {which} off its initial value, which the reference follows"
                       + (f"; the output does not change at all with {', '.join(ignored)}" if ignored else ""))
            report.findings.insert(0, Finding(check="parameter", message=message,
                                              hint="a trained model's norm affines and scales are not their initial "
                                                   "ones: read every parameter in forward"))


def _trial(report: CorrectnessReport, label: str) -> TrialResult:
    return next(t for t in report.trials if t.label == label)


def _perturbed_only_failure(report: CorrectnessReport) -> bool:
    initial = [t for t in report.trials if t.weights == "initial"]
    moved = [t for t in report.trials if t.weights == "perturbed"]
    return (not report.findings and bool(initial) and all(t.passed for t in initial)
            and any(not t.passed and t.comparisons for t in moved))


def merge_audits(audits: list[AuditSummary]) -> AuditSummary:
    """One summary for a shape: the worst call's figures, every op, copy and kernel seen."""
    out = AuditSummary()
    for a in audits:
        out.calls += a.calls
        out.torch_flops = max(out.torch_flops, a.torch_flops)
        out.allowed_flops = max(out.allowed_flops, a.allowed_flops)
        out.movement_bytes = max(out.movement_bytes, a.movement_bytes)
        for mine, theirs in ((out.compute_ops, a.compute_ops), (out.refused_ops, a.refused_ops)):
            for k, v in theirs.items():
                mine[k] = max(mine.get(k, 0), v)
        out.device_to_host += [d for d in a.device_to_host if d not in out.device_to_host]
        out.host_exits += [d for d in a.host_exits if d not in out.host_exits]
        out.foreign_kernels += [k for k in a.foreign_kernels if k not in out.foreign_kernels]
        out.kernel_list = a.kernel_list or out.kernel_list
    return out
