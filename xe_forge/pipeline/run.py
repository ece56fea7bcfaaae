"""`xe-forge optimize`: set up a run directory, the evaluator and proposers, and drive the graph.

A run lives in runs/<run_id>/: the input, output.py, the run store (store.sqlite), the LangGraph
checkpoints (checkpoints.sqlite) and the reports. `--resume RUN_ID` rebuilds the same context from
the stored arguments and continues from the last finished node; the LLM cache in the store replays
every answer already paid for.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xe_forge.config import Settings
from xe_forge.errors import EnvError, InputError
from xe_forge.pipeline.progress import Progress
from xe_forge.problem.kernel import load_problem
from xe_forge.stages import load_stages, parse_stage_list
from xe_forge.store import LLMCache, RunStore
from xe_forge.verify.evaluate import Evaluator, input_allowance

ENGINES = ("auto", "llm", "rules")


class OptimizeArgs(BaseModel):
    kernel: str
    reference: str | None = None
    spec: str | None = None
    variant: str | None = None
    device: str = "auto"
    target: str | None = None
    engine: str = "auto"
    model: str | None = None
    stages: str | None = None
    max_iters: int = 4
    timeout: float = 300.0
    kb_dirs: list[str] = []


class OptimizeResult(BaseModel):
    run_id: str
    run_dir: str
    status: str
    exit_code: int
    report: dict[str, Any]


def _absolute(args: OptimizeArgs) -> OptimizeArgs:
    def resolve(p: str | None) -> str | None:
        return str(Path(p).resolve()) if p else p

    return args.model_copy(update={"kernel": resolve(args.kernel), "reference": resolve(args.reference),
                                   "spec": resolve(args.spec), "kb_dirs": [resolve(d) for d in args.kb_dirs]})


def new_run_id(kernel: Path) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{kernel.stem[:24]}-{uuid.uuid4().hex[:6]}"


def resolve_engine(engine: str, settings: Settings) -> str:
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}'", hint="choose auto, llm or rules")
    if engine == "llm" and not settings.llm_configured():
        raise EnvError("--engine llm needs a model: pass --model or set XE_FORGE_MODEL")
    if engine == "auto":
        return "llm" if settings.llm_configured() else "rules"
    return engine


def optimize(args: OptimizeArgs, settings: Settings, *, run_dir_root: Path, resume: str | None = None,
             output: Path | None = None, progress: Progress | None = None, lm: Any = None,
             run_id: str | None = None) -> OptimizeResult:
    """Run (or resume) the pipeline on one kernel; returns the status and the exit code per DESIGN.md."""
    progress = progress or Progress()
    run_dir_root = Path(run_dir_root).resolve()
    if resume:
        run_dir = run_dir_root / resume
        if not (run_dir / "args.json").is_file():
            raise InputError(f"no run '{resume}' under {run_dir_root}", hint="runs are directories under --run-dir")
        args = OptimizeArgs(**json.loads((run_dir / "args.json").read_text()))
        run_id = resume
    else:
        args = _absolute(args)  # args.json must work from any directory on --resume
        run_id = run_id or new_run_id(Path(args.kernel))
        run_dir = run_dir_root / run_id
    if args.model:
        settings = settings.model_copy(update={"model": args.model})
    engine = resolve_engine(args.engine, settings)
    problem = load_problem(args.kernel, args.reference, args.spec, args.variant)
    only = parse_stage_list(args.stages)
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        (run_dir / "args.json").write_text(args.model_dump_json(indent=2))
        shutil.copyfile(problem.kernel.path, run_dir / "input.py")
    store = RunStore(run_dir / "store.sqlite")
    store.start_run(run_id, str(problem.kernel.path), args.model_dump())
    progress.phase("run", f"{run_id} in {run_dir} (engine: {engine})")
    evaluator = Evaluator(args.device, args.target, timeout=args.timeout, workdir=run_dir / "candidates",
                          kb=_load_kb(args.kb_dirs))
    for warning in evaluator.warnings_for(problem):
        progress.phase("warning", warning)
    try:
        ctx = _context(run_id, problem, evaluator, settings, engine, only, store, progress, args, run_dir, lm)
        state = _drive(ctx, run_dir, run_id, problem.kernel.source, resume=bool(resume))
    finally:
        evaluator.close()
    report = json.loads((run_dir / "report.json").read_text())
    code = 0 if state["status"].startswith("improved") else 1
    store.finish_run(run_id, state["status"], report)
    store.close()
    if output is not None and code == 0:
        output.write_text(state["code"])
    return OptimizeResult(run_id=run_id, run_dir=str(run_dir), status=state["status"], exit_code=code, report=report)


def _load_kb(dirs: list[str]) -> Any:
    from xe_forge.kb import load_kb

    return load_kb([Path(d) for d in dirs])


def _context(run_id, problem, evaluator, settings, engine, only, store, progress, args, run_dir, lm):
    from xe_forge.pipeline.state import RunContext
    from xe_forge.proposers.lower.proposer import candidate_sources
    from xe_forge.proposers.rules.proposer import RulesProposer

    kb = evaluator.kb
    toolchain = getattr(evaluator.device, "target_toolchain", evaluator.device.toolchain)()
    allowance = input_allowance(problem)
    llm = None
    if engine == "llm":
        from xe_forge.proposers.llm import LLMClient, LLMProposer

        def on_call(call):
            store.add_llm_call(run_id, call)
            progress.llm_call(call)

        client = LLMClient(settings, lm=lm, cache=LLMCache(store), on_call=on_call)
        llm = LLMProposer(client, allowance=", ".join(sorted(allowance)))
    return RunContext(run_id=run_id, problem=problem, evaluator=evaluator, stages=load_stages(), allowance=allowance,
                   target=evaluator.target, toolchain=toolchain, kb=kb,
                   rules=RulesProposer(kb, evaluator.target, toolchain), llm=llm, store=store, progress=progress,
                   max_iters=args.max_iters, only_stages=only, kb_budget=settings.kb_budget_tokens, engine=engine,
                   sources=candidate_sources(problem, evaluator, args.timeout), extras={"run_dir": str(run_dir)})


def _drive(ctx, run_dir: Path, run_id: str, input_code: str, *, resume: bool) -> dict[str, Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from xe_forge.pipeline.graph import build_graph

    conn = sqlite3.connect(run_dir / "checkpoints.sqlite", check_same_thread=False)
    try:
        graph = build_graph(SqliteSaver(conn))
        config = {"configurable": {"thread_id": run_id}, "recursion_limit": 64}
        snapshot = graph.get_state(config)
        if resume and snapshot.next:
            ctx.progress.phase("resume", f"continuing at {', '.join(snapshot.next)}; finished: "
                                         f"{', '.join(snapshot.values.get('done', [])) or 'no stage yet'}")
            graph.invoke(None, config, context=ctx)
        elif resume and snapshot.values.get("status"):
            ctx.progress.phase("resume", "this run already finished")
        else:
            graph.invoke({"run_id": run_id, "input_code": input_code, "code": input_code, "done": [],
                          "outcomes": []}, config, context=ctx)
        return graph.get_state(config).values
    finally:
        conn.close()
