"""The batch runner's `port` step: a first Triton version of a PyTorch problem that has no seed kernel.

It is one CoVeR loop (pipeline.cover.run_stage) with the LLM proposer and the port stage of
stages/standalone/port.yaml: propose, verify, refine with the findings, until a candidate is correct.
The port gets no torch allowance at all. Its run store (`<run_id>-port/store.sqlite`) caches the
answers, so a resumed batch never pays for them twice.
"""

from __future__ import annotations

from pathlib import Path

from xe_forge.config import RunRequest, Settings
from xe_forge.pipeline.cover import recorder, run_stage
from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.base import StageRequest
from xe_forge.proposers.llm import LLMClient, LLMProposer
from xe_forge.stages import standalone_stage
from xe_forge.store import LLMCache, RunStore
from xe_forge.verify.evaluate import Evaluator


def port_problem(request: RunRequest, run_id: str, settings: Settings) -> str | None:
    """Returns the path of a verified seed kernel, or None when every attempt failed."""
    work = Path(request.run_dir) / f"{run_id}-port"
    kernel = work / "kernel.py"
    if kernel.is_file():  # ported and verified by an earlier attempt (a resumed batch)
        return str(kernel)
    work.mkdir(parents=True, exist_ok=True)
    store = RunStore(work / "store.sqlite")
    try:
        client = LLMClient(settings, cache=LLMCache(store), on_call=lambda c: store.add_llm_call(run_id, c))
        problem = load_problem(request.reference, request.reference, request.spec, request.variant)
        with Evaluator(request.device, request.target, timeout=request.timeout, trials=request.trials,
                       workdir=work / "candidates") as ev:
            task = StageRequest(stage=standalone_stage("port"), code="", reference=problem.reference.source,
                                target=ev.target)
            outcome = run_stage(task, problem, [LLMProposer(client)], ev, allowance=set(),
                                max_iters=max(1, request.max_iters), on_candidate=recorder(store, run_id, "port"))
    finally:
        store.close()
    if not outcome.improved:
        return None
    kernel.write_text(outcome.code)
    return str(kernel)
