"""The batch runner's `port` step: a first verified Triton version of a problem that has no seed kernel.

First the offline port (xe_forge/proposers/lower): the general Triton path of the reference, with
TorchInductor's Triton-only lowering as its fast path where a GPU can make one (budgeted, cached).
On the CPU, or where the lowering fails, the port is the general path alone. If it verifies, it is
the seed and no LLM is asked. If not, and an LLM is configured, the LLM ports in one CoVeR loop
(pipeline.cover.run_stage with the port stage of stages/standalone/port.yaml: propose, verify, refine
with the findings), starting from the port and its verdict. Every candidate goes through the same
verifier; the port gets only the torch ops the spec allows. The port's run store
(`<run_id>-port/store.sqlite`) keeps every candidate and caches the LLM's answers, so a resumed batch
never pays for them twice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from xe_forge.batch.models import PortedBy
from xe_forge.config import RunRequest, Settings
from xe_forge.errors import EnvError
from xe_forge.pipeline.cover import CandidateRecord, recorder, run_stage
from xe_forge.problem.kernel import Problem, load_problem
from xe_forge.proposers.base import Attempt, Proposal, StageRequest
from xe_forge.proposers.lower import service
from xe_forge.proposers.lower.models import Lowering
from xe_forge.proposers.lower.proposer import RATIONALE
from xe_forge.stages import standalone_stage
from xe_forge.store import LLMCache, RunStore
from xe_forge.verify.evaluate import Evaluator, declared_allowance
from xe_forge.verify.models import Timing, Verdict

NO_LLM = "no seed kernel, and no LLM configured to port one"
LOWERED_START = ("This candidate is the offline Triton port of the reference (a general path for every shape, "
                 "TorchInductor's fused, autotuned kernels as the fast path where they exist): start from it, keep "
                 "what works and fix what the verifier found.\n")


class PortResult(BaseModel):
    """A verified seed kernel's path and who made it, or why there is none (exit_code 3: retried on --resume)."""

    seed: str | None = None
    status: Literal["ported", "skipped", "failed"] = "ported"
    by: PortedBy | None = None
    reason: str = ""
    exit_code: int | None = None
    timings: dict[str, Timing] = {}
    paths: dict[str, str] = {}
    device: str | None = None
    degenerate: list[str] = []
    not_checked: list[str] = []


def port_problem(request: RunRequest, run_id: str, settings: Settings, *, compile_baseline: bool = False) -> PortResult:
    work = Path(request.run_dir) / f"{run_id}-port"
    if (work / "kernel.py").is_file():  # ported and verified by an earlier attempt (a resumed batch)
        by = (work / "by").read_text().strip() if (work / "by").is_file() else "llm"
        done = PortResult(seed=str(work / "kernel.py"), by=by if by in ("lower", "general") else "llm")
        if (work / "port.json").is_file():
            done = PortResult.model_validate_json((work / "port.json").read_text())
        return done
    problem = load_problem(request.reference, request.reference, request.spec, request.variant,
                           precision=request.precision)
    lowering, why = _lowering(problem, request)
    use_llm = settings.llm_configured() and request.engine != "rules"
    work.mkdir(parents=True, exist_ok=True)
    store = RunStore(work / "store.sqlite")
    allow = declared_allowance(problem)
    try:
        with Evaluator(request.device, request.target, timeout=request.timeout, trials=request.trials,
                       workdir=work / "candidates") as ev:
            task = StageRequest(stage=standalone_stage("port"), code="", reference=problem.reference.source,
                                target=ev.target)
            outcome = service.verify_port(problem, ev, [lowering] if lowering is not None else [], allow_torch=allow,
                                          compile_baseline=compile_baseline)
            fast = outcome.packaged is not None and any(p != "general" for p in outcome.packaged.paths)
            if outcome.packaged is not None and outcome.verdict is not None:  # packaged and judged
                _record_lowered(store, run_id, outcome.packaged.source, outcome.verdict)
                if outcome.passed:
                    return _ported(work, outcome.packaged.source, "lower" if fast else "general", outcome)
                task.attempts.append(Attempt(code=outcome.packaged.source, passed=False,
                                             feedback=LOWERED_START + outcome.verdict.feedback()))
            why = "; ".join(p for p in (outcome.reason, f"no fast path ({why})" if why else "") if p)
            if not use_llm and lowering is None and outcome.packaged is None:  # a GPU may port it: --resume retries
                return PortResult(status="skipped", reason=f"{NO_LLM}; the offline port: {why}", exit_code=3)
            if not use_llm:
                return PortResult(status="failed", reason=f"{NO_LLM}; the offline port: {why}")
            from xe_forge.proposers.llm import LLMClient, LLMProposer

            client = LLMClient(settings, cache=LLMCache(store), on_call=lambda c: store.add_llm_call(run_id, c))
            ported = run_stage(task, problem, [LLMProposer(client)], ev, allowance=allow,
                               max_iters=max(1, request.max_iters), on_candidate=recorder(store, run_id, "port"))
    finally:
        store.close()
    if not ported.improved:
        return PortResult(status="failed", reason="the LLM could not port the problem to a correct Triton kernel")
    return _ported(work, ported.code, "llm")


def _lowering(problem: Problem, request: RunRequest) -> tuple[Lowering | None, str]:
    """TorchInductor's lowering of the reference, or (None, why not) where it cannot run (no GPU)."""
    try:
        return service.lower_problem(problem, device=request.device, timeout=max(request.timeout, 600.0),
                                     budget_s=request.lower_budget), ""
    except EnvError as err:
        return None, err.message


def _record_lowered(store: RunStore, run_id: str, code: str, verdict: Verdict) -> None:
    """The lowered candidate in the port's run store, as iteration 0 (the LLM's start from 1)."""
    record = CandidateRecord(iteration=0, source="lower", recipe="inductor-lowering", passed=verdict.passed,
                             accepted=verdict.passed, summary=verdict.summary())
    proposal = Proposal(code=code, recipe="inductor-lowering", source="lower", rationale=RATIONALE)
    recorder(store, run_id, "port")(record, proposal, verdict)


def _ported(work: Path, code: str, by: PortedBy, outcome: service.PortOutcome | None = None) -> PortResult:
    path = work / "kernel.py"
    path.write_text(code)
    (work / "by").write_text(by)
    result = PortResult(seed=str(path), by=by)
    if outcome is not None and outcome.verdict is not None:
        v = outcome.verdict
        result = result.model_copy(update={
            "timings": dict(v.timings), "paths": dict(outcome.paths), "device": v.device,
            "degenerate": sorted({d for r in v.correctness for d in r.degenerate}),
            "not_checked": [n for n in v.notes if "not" in n or "skipped" in n]})
        (work / "port.json").write_text(result.model_dump_json())
    return result
