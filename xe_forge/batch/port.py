"""The batch runner's `port` step: ask the LLM for a first Triton version of a PyTorch problem.

The port goes through the same verifier as every candidate (CoVeR: propose, verify, refine with the
findings) before the pipeline optimizes it; the port gets no torch allowance at all.
"""

from __future__ import annotations

from pathlib import Path

from xe_forge.config import RunRequest, Settings
from xe_forge.problem.kernel import load_problem
from xe_forge.prompting import render
from xe_forge.proposers.base import Attempt
from xe_forge.proposers.llm import LLMClient, OptimizeStage, RefineStage, extract_code
from xe_forge.store import LLMCache, RunStore
from xe_forge.verify.evaluate import Evaluator


def port_problem(request: RunRequest, run_id: str, settings: Settings) -> str | None:
    """Returns the path of a verified seed kernel, or None when every attempt failed."""
    work = Path(request.run_dir) / f"{run_id}-port"
    if (work / "kernel.py").is_file():  # ported and verified by an earlier attempt (a resumed batch)
        return str(work / "kernel.py")
    work.mkdir(parents=True, exist_ok=True)
    store = RunStore(work / "store.sqlite")
    client = LLMClient(settings, cache=LLMCache(store), on_call=lambda c: store.add_llm_call(run_id, c))
    problem = load_problem(request.reference, request.reference, request.spec, request.variant)
    reference = problem.reference.source
    attempts: list[Attempt] = []
    with Evaluator(request.device, request.target, timeout=request.timeout, trials=request.trials, workdir=work / "candidates") as ev:
        for i in range(max(1, request.max_iters)):
            task = render("port.j2", target=ev.target, reference=reference, attempts=attempts)
            if attempts:
                task = render("refine.j2", stage={"name": "port"}, target=ev.target, failure=attempts[-1].feedback,
                              previous=attempts[-1].code, task=task)
            out = client.call(RefineStage if attempts else OptimizeStage, task, purpose="port", stage="port")
            code = extract_code(str(out.get("code", "")))
            verdict = ev.evaluate(code, problem, allow_torch=(), time_it=False, name=f"port_{i}")
            store.add_candidate(run_id, "port", i + 1, code=code, source="llm", recipe="port", entry_id=None,
                                prompt_hash=out.get("_prompt_hash"), rationale=str(out.get("rationale", "")),
                                verdict=verdict.model_dump(mode="json"), passed=verdict.passed,
                                accepted=verdict.passed, speedup=None)
            if verdict.passed:
                path = work / "kernel.py"
                path.write_text(code)
                store.close()
                return str(path)
            attempts.append(Attempt(code=code, feedback=verdict.feedback(), passed=False))
    store.close()
    return None
