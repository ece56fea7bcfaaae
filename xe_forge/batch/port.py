"""The batch runner's `port` step: a first verified Triton version of a problem that has no seed.

First TorchInductor's Triton-only lowering of the reference, packaged as a kernel module
(xe_forge/proposers/lower; needs a GPU). If it verifies, it is the seed and no LLM is asked. If not,
and an LLM is configured, the LLM ports with CoVeR (propose, verify, refine with the findings),
starting from the lowered candidate and its verdict when there is one. Every candidate goes through
the same verifier; the port gets only the torch ops the spec allows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from xe_forge.problem.kernel import load_problem
from xe_forge.prompting import render
from xe_forge.proposers.base import Attempt
from xe_forge.proposers.lower.service import verify_port
from xe_forge.store import LLMCache, RunStore
from xe_forge.verify.evaluate import Evaluator, declared_allowance

NO_LLM = "no seed kernel, and no LLM configured to port one"
LOWERED_START = ("This candidate is TorchInductor's Triton lowering of the reference (fused, autotuned kernels): "
                 "start from it, keep what works and fix what the verifier found.\n")


class PortResult(BaseModel):
    seed: str | None = None
    status: Literal["ported", "skipped", "failed"] = "ported"
    by: Literal["lower", "llm"] | None = None
    reason: str = ""
    exit_code: int | None = None


def port_problem(job: Any, settings: Any) -> PortResult:
    """A verified seed kernel's path, or why there is none."""
    work = Path(job.run_root) / f"{job.run_id}-port"
    if (work / "kernel.py").is_file():  # ported and verified by an earlier attempt (a resumed batch)
        by = (work / "by").read_text().strip() if (work / "by").is_file() else "llm"
        return PortResult(seed=str(work / "kernel.py"), by=by)
    problem = load_problem(job.problem_path, job.problem_path, job.spec_path, job.variant)
    lowering, why = _lowering(problem, job)
    use_llm = settings.llm_configured() and job.engine != "rules"
    if lowering is None and not use_llm:  # nothing could run here: retried by `batch --resume` (exit 3)
        return PortResult(status="skipped", reason=f"{NO_LLM}; {why}", exit_code=3)
    work.mkdir(parents=True, exist_ok=True)
    store = RunStore(work / "store.sqlite")
    try:
        with Evaluator(job.device, job.target, timeout=job.timeout, workdir=work / "candidates") as ev:
            attempts: list[Attempt] = []
            if lowering is not None:
                outcome = verify_port(problem, ev, lowering, allow_torch=declared_allowance(problem))
                if outcome.packaged is not None:
                    store.add_candidate(job.run_id, "port", 0, code=outcome.packaged.source, source="lower",
                                        recipe="inductor-lowering", entry_id=None, prompt_hash=None,
                                        rationale="TorchInductor's Triton-only lowering of the reference",
                                        verdict=outcome.verdict.model_dump(mode="json"), passed=outcome.passed,
                                        accepted=outcome.passed, speedup=None)
                    if outcome.passed:
                        return _ported(work, outcome.packaged.source, "lower")
                    attempts.append(Attempt(code=outcome.packaged.source, passed=False,
                                            feedback=LOWERED_START + outcome.verdict.feedback()))
                why = outcome.reason
            if not use_llm:
                return PortResult(status="failed", reason=f"{NO_LLM}; the TorchInductor lowering: {why}")
            return _llm_port(job, settings, problem, ev, store, work, attempts)
    finally:
        store.close()


def _lowering(problem: Any, job: Any) -> tuple[Any, str]:
    """TorchInductor's lowering of the reference, or (None, why not) where it cannot run."""
    from xe_forge.errors import EnvError
    from xe_forge.proposers.lower.service import lower_problem

    try:
        return lower_problem(problem, device=job.device, timeout=job.timeout), ""
    except EnvError as err:
        return None, err.message


def _ported(work: Path, code: str, by: str) -> PortResult:
    path = work / "kernel.py"
    path.write_text(code)
    (work / "by").write_text(by)
    return PortResult(seed=str(path), by=by)


def _llm_port(job: Any, settings: Any, problem: Any, ev: Evaluator, store: RunStore, work: Path,
              attempts: list[Attempt]) -> PortResult:
    from xe_forge.proposers.llm import LLMClient, OptimizeStage, RefineStage, extract_code

    client = LLMClient(settings, cache=LLMCache(store), on_call=lambda c: store.add_llm_call(job.run_id, c))
    reference = problem.reference.source
    allow = declared_allowance(problem)
    for i in range(max(1, job.max_iters)):
        task = render("port.j2", target=ev.target, reference=reference, attempts=attempts)
        if attempts:
            task = render("refine.j2", stage={"name": "port"}, target=ev.target, failure=attempts[-1].feedback,
                          previous=attempts[-1].code, task=task)
        out = client.call(RefineStage if attempts else OptimizeStage, task, purpose="port", stage="port")
        code = extract_code(str(out.get("code", "")))
        verdict = ev.evaluate(code, problem, allow_torch=allow, time_it=False, name=f"port_{i}")
        store.add_candidate(job.run_id, "port", i + 1, code=code, source="llm", recipe="port", entry_id=None,
                            prompt_hash=out.get("_prompt_hash"), rationale=str(out.get("rationale", "")),
                            verdict=verdict.model_dump(mode="json"), passed=verdict.passed,
                            accepted=verdict.passed, speedup=None)
        if verdict.passed:
            return _ported(work, code, "llm")
        attempts.append(Attempt(code=code, feedback=verdict.feedback(), passed=False))
    return PortResult(status="failed", reason="the LLM could not port the problem to a correct Triton kernel")
