"""The batch runner's `port` step: a first verified Triton version of a problem that has no seed kernel.

First TorchInductor's Triton-only lowering of the reference, packaged as a kernel module
(xe_forge/proposers/lower; needs a GPU). If it verifies, it is the seed and no LLM is asked. If not,
and an LLM is configured, the LLM ports in one CoVeR loop (pipeline.cover.run_stage with the port
stage of stages/standalone/port.yaml: propose, verify, refine with the findings), starting from the
lowered candidate and its verdict when there is one. Every candidate goes through the same verifier;
the port gets only the torch ops the spec allows. The port's run store (`<run_id>-port/store.sqlite`)
keeps every candidate and caches the LLM's answers, so a resumed batch never pays for them twice.
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
from xe_forge.verify.models import Verdict

NO_LLM = "no seed kernel, and no LLM configured to port one"
LOWERED_START = ("This candidate is TorchInductor's Triton lowering of the reference (fused, autotuned kernels): "
                 "start from it, keep what works and fix what the verifier found.\n")


class PortResult(BaseModel):
    """A verified seed kernel's path and who made it, or why there is none (exit_code 3: retried on --resume)."""

    seed: str | None = None
    status: Literal["ported", "skipped", "failed"] = "ported"
    by: PortedBy | None = None
    reason: str = ""
    exit_code: int | None = None


def port_problem(request: RunRequest, run_id: str, settings: Settings) -> PortResult:
    work = Path(request.run_dir) / f"{run_id}-port"
    if (work / "kernel.py").is_file():  # ported and verified by an earlier attempt (a resumed batch)
        by = (work / "by").read_text().strip() if (work / "by").is_file() else "llm"
        return PortResult(seed=str(work / "kernel.py"), by="lower" if by == "lower" else "llm")
    problem = load_problem(request.reference, request.reference, request.spec, request.variant)
    lowering, why = _lowering(problem, request)
    use_llm = settings.llm_configured() and request.engine != "rules"
    if lowering is None and not use_llm:  # nothing could run here: retried by `batch --resume` (exit 3)
        return PortResult(status="skipped", reason=f"{NO_LLM}; {why}", exit_code=3)
    work.mkdir(parents=True, exist_ok=True)
    store = RunStore(work / "store.sqlite")
    allow = declared_allowance(problem)
    try:
        with Evaluator(request.device, request.target, timeout=request.timeout, trials=request.trials,
                       workdir=work / "candidates") as ev:
            task = StageRequest(stage=standalone_stage("port"), code="", reference=problem.reference.source,
                                target=ev.target)
            if lowering is not None:
                outcome = service.verify_port(problem, ev, lowering, allow_torch=allow)
                if outcome.packaged is not None and outcome.verdict is not None:  # packaged and judged
                    _record_lowered(store, run_id, outcome.packaged.source, outcome.verdict)
                    if outcome.passed:
                        return _ported(work, outcome.packaged.source, "lower")
                    task.attempts.append(Attempt(code=outcome.packaged.source, passed=False,
                                                 feedback=LOWERED_START + outcome.verdict.feedback()))
                why = outcome.reason
            if not use_llm:
                return PortResult(status="failed", reason=f"{NO_LLM}; the TorchInductor lowering: {why}")
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
        return service.lower_problem(problem, device=request.device, timeout=request.timeout), ""
    except EnvError as err:
        return None, err.message


def _record_lowered(store: RunStore, run_id: str, code: str, verdict: Verdict) -> None:
    """The lowered candidate in the port's run store, as iteration 0 (the LLM's start from 1)."""
    record = CandidateRecord(iteration=0, source="lower", recipe="inductor-lowering", passed=verdict.passed,
                             accepted=verdict.passed, summary=verdict.summary())
    proposal = Proposal(code=code, recipe="inductor-lowering", source="lower", rationale=RATIONALE)
    recorder(store, run_id, "port")(record, proposal, verdict)


def _ported(work: Path, code: str, by: PortedBy) -> PortResult:
    path = work / "kernel.py"
    path.write_text(code)
    (work / "by").write_text(by)
    return PortResult(seed=str(path), by=by)
