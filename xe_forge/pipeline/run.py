"""`xe-forge optimize`: set up a run directory, the evaluator and proposers, and drive the graph.

A run lives in runs/<run_id>/: the input, output.py, the run store (store.sqlite), the LangGraph
checkpoints (checkpoints.sqlite) and the reports. `--resume RUN_ID` rebuilds the same context from
the stored arguments (args.json: every option, -o included; options given again replace them) and
continues from the last finished node; the LLM cache in the store replays every answer already paid
for. A run that stops early (Ctrl-C, an LLM endpoint that fails, the budget spent) says so in one
line with the exact command that continues it; a run stopped by its budget is reopened by a resume
with a larger one.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import signal
import sqlite3
import threading
import time
import uuid
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

from xe_forge.config import RunOptions, RunRequest, Settings
from xe_forge.errors import EnvError, ForgeError, InputError, Interrupted
from xe_forge.kb import load_kb
from xe_forge.pipeline.nodes import budget_spent
from xe_forge.pipeline.progress import Progress
from xe_forge.pipeline.report import RunReport
from xe_forge.pipeline.run_clock import RunClock, default_budget_s
from xe_forge.pipeline.state import BEST_SO_FAR, CHECKPOINT_TYPES, ForgeState, RunContext
from xe_forge.pipeline.status import exit_code
from xe_forge.problem.kernel import Problem, load_problem
from xe_forge.profile.session import ProfileSession
from xe_forge.stages import load_stages, parse_stage_list
from xe_forge.store import LLMCache, RunStore
from xe_forge.verify.evaluate import Evaluator, input_allowance

if TYPE_CHECKING:
    from dspy import BaseLM


class OptimizeResult(BaseModel):
    run_id: str
    run_dir: str
    status: str
    exit_code: int
    report: RunReport
    output: str | None = None
    resume: str = ""

    @property
    def stopped_early(self) -> bool:
        return bool(self.report.not_run)


def resume_command(run_id: str, run_dir_root: Path) -> str:
    """The exact command that continues a run (with --run-dir unless it is ./runs)."""
    command = f"xe-forge optimize --resume {run_id}"
    if Path(run_dir_root).resolve() != (Path.cwd() / "runs").resolve():
        command += f" --run-dir {shlex.quote(str(run_dir_root))}"
    return command


def new_run_id(kernel: Path) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{kernel.stem[:24]}-{uuid.uuid4().hex[:6]}"


def resolve_engine(engine: str, settings: Settings) -> str:
    if engine == "llm" and not settings.llm_configured():
        raise EnvError("--engine llm needs a model: pass --model or set XE_FORGE_MODEL")
    if engine == "auto":
        return "llm" if settings.llm_configured() else "rules"
    return engine


def optimize(request: RunRequest, settings: Settings, *, resume: str | None = None, given: Collection[str] = (),
             progress: Progress | None = None, lm: BaseLM | None = None, run_id: str | None = None) -> OptimizeResult:
    """Run (or resume) the pipeline on one kernel; returns the status and the exit code (0: improved, 1: not).

    `resume` names a run under request.run_dir; its stored request (args.json) is used, with the fields
    named in `given` (options the user gave again) taken from this one. `lm` replaces the configured
    model (tests script one).
    """
    progress = progress or Progress()
    run_dir_root = Path(request.run_dir).resolve()
    if resume:
        run_dir = run_dir_root / resume
        if not (run_dir / "args.json").is_file():
            raise InputError(f"no run '{resume}' under {run_dir_root}", hint="runs are directories under --run-dir")
        stored = RunRequest.model_validate_json((run_dir / "args.json").read_text())
        update = {k: getattr(request.absolute(), k) for k in given if k in RunRequest.model_fields}
        request = stored.model_copy(update={**update, "run_dir": run_dir_root})
        run_id = resume
    else:
        request = request.absolute().model_copy(update={"run_dir": run_dir_root})  # args.json works from anywhere
        run_id = run_id or new_run_id(Path(request.kernel))
        run_dir = run_dir_root / run_id
    started = time.monotonic()  # the time budget counts from here: workers, baseline and final check included
    options = request.model_dump(include=set(RunOptions.model_fields))
    settings = settings.model_copy(update={k: v for k, v in options.items() if v is not None})
    engine = resolve_engine(request.engine, settings)
    problem = load_problem(request.kernel, request.reference, request.spec, request.variant,
                           precision=request.precision)
    only = parse_stage_list(request.stages)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "args.json").write_text(request.model_dump_json(indent=2))  # a resume's new options, too
    if not resume:
        shutil.copyfile(problem.kernel.path, run_dir / "input.py")
    store = RunStore(run_dir / "store.sqlite")
    store.start_run(run_id, str(problem.kernel.path), request.model_dump(mode="json"))
    progress.phase("run", f"{run_id} in {run_dir} (engine: {engine})")
    progress.timeout = request.timeout
    continue_with = resume_command(run_id, run_dir_root)
    evaluator = None
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(terminate_as_interrupt())
        evaluator = Evaluator(request.device, request.target, timeout=request.timeout, trials=request.trials,
                              workdir=run_dir / "candidates", kb=load_kb([Path(d) for d in request.kb_dirs]))
        for warning in evaluator.warnings_for(problem):
            progress.phase("warning", warning)
        if problem.spec is None:
            progress.phase("hint", f"`xe-forge spec init {problem.kernel.path}` writes a spec (docs/SPEC.md)")
        ctx = _context(run_id, run_dir, problem, evaluator, settings, engine, store, progress, lm,
                       max_iters=request.max_iters, only_stages=only, request=request, started=started)
        state = _drive(ctx, problem.kernel.source, resume=bool(resume))
    except BaseException as err:  # a run directory never ends without a report saying why
        with contextlib.suppress(Exception):  # the run's own error is the one to report
            _write_failure(run_dir, run_id, problem, evaluator, engine, err, store, continue_with)
        if isinstance(err, KeyboardInterrupt):
            best = run_dir / BEST_SO_FAR
            kept = f"; the best verified kernel so far is {best}" if best.exists() else ""
            raise Interrupted(f"interrupted: run {run_id} is saved{kept}; continue with: {continue_with}") from None
        if isinstance(err, EnvError):  # the LLM endpoint, a device: fix it, then continue where the run stopped
            err.hint = f"{err.hint + '; then ' if err.hint else ''}continue with: {continue_with}"
        raise
    finally:
        progress.close()
        if evaluator is not None:
            evaluator.close()
        stack.close()
    report = RunReport.model_validate_json((run_dir / "report.json").read_text())
    status = state.status or report.status
    code = exit_code(status)
    store.finish_run(run_id, status, report.model_dump(mode="json"))
    store.close()
    written = None
    if request.output and code == 0:
        Path(request.output).write_text(state.code)
        written = request.output
    return OptimizeResult(run_id=run_id, run_dir=str(run_dir), status=status, exit_code=code, report=report,
                          output=written, resume=continue_with)


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a job's time limit, `timeout`, `kill`) ends a run as Ctrl-C does: report written, workers
    ended, the best kernel so far named. Python's default for it ends the process where it stands."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write_failure(run_dir: Path, run_id: str, problem: Problem, evaluator: Evaluator | None, engine: str,
                   err: BaseException, store: RunStore, continue_with: str) -> None:
    """report.json/md/html of a run that stopped early; the store records the same status."""
    from xe_forge.pipeline.report import failure_report, write_report_files

    report = failure_report(run_id, str(problem.kernel.path), err, continue_with,
                            reference=str(problem.reference.path), reference_is_self=problem.reference_is_self,
                            engine=engine, device=evaluator.device.kind if evaluator else "unknown",
                            target=evaluator.target if evaluator else "unknown",
                            **(_toolchains(evaluator) if evaluator else {}))
    store.finish_run(run_id, report.status, report.model_dump(mode="json"))
    store.close()
    write_report_files(run_dir, report, input_code=problem.kernel.source)
    if isinstance(err, ForgeError):
        err.hint = "; ".join(filter(None, [err.hint, f"failure report: {run_dir / 'report.md'}"]))


def _toolchains(evaluator: Evaluator) -> dict[str, str]:
    """The toolchain a kernel is prepared for, and the one installed here (they differ on the CPU)."""
    device = evaluator.device
    return {"toolchain": str(getattr(device, "target_toolchain", device.toolchain)()),
            "device_toolchain": str(device.toolchain())}


def _context(run_id: str, run_dir: Path, problem: Problem, evaluator: Evaluator, settings: Settings, engine: str,
             store: RunStore, progress: Progress, lm: BaseLM | None, *, max_iters: int,
             only_stages: list[str] | None, request: RunRequest, started: float | None = None) -> RunContext:
    from xe_forge.proposers.lower.proposer import candidate_sources
    from xe_forge.proposers.rules.proposer import RulesProposer

    toolchain = getattr(evaluator.device, "target_toolchain", evaluator.device.toolchain)()
    allowance = input_allowance(problem)
    llm = None
    if engine == "llm":
        from xe_forge.proposers.llm import LLMCall, LLMClient, LLMProposer

        def on_call(call: LLMCall) -> None:
            store.add_llm_call(run_id, call)
            progress.llm_call(call)

        client = LLMClient(settings, lm=lm, cache=LLMCache(store), on_call=on_call,
                           budget=request.spending_limit(), spent=store.llm_spent(run_id))
        for warning in client.warnings:
            progress.phase("warning", warning)
        progress.model(client.profile)
        llm = LLMProposer(client, allowance=", ".join(sorted(allowance)))
    limit = request.spending_limit()
    if engine != "llm" and limit is not None and limit.unit != "seconds":
        progress.phase("warning", "--budget in dollars or tokens limits LLM calls; the rules engine makes none")
    clock = RunClock(limit.amount if limit is not None and limit.unit == "seconds" else
                     None if limit is not None or request.budget_off() else
                     default_budget_s(engine, evaluator.measures_speed))
    clock.started = started if started is not None else clock.started
    sources = candidate_sources(problem, evaluator, clock.lowering_budget)
    return RunContext(run_id=run_id, run_dir=run_dir, problem=problem, evaluator=evaluator, stages=load_stages(),
                      allowance=allowance, target=evaluator.target, toolchain=toolchain, kb=evaluator.kb, store=store,
                      progress=progress, rules=RulesProposer(evaluator.kb, evaluator.target, toolchain), llm=llm,
                      max_iters=max_iters, only_stages=only_stages, kb_budget=settings.kb_budget_tokens, engine=engine,
                      profiler=_profiler(problem, evaluator, run_dir) if request.profile else None, clock=clock,
                      sources=sources)


def _profiler(problem: Problem, evaluator: Evaluator, run_dir: Path) -> ProfileSession:
    """`--profile`: one session for the run, on the evaluator's device and target, with its timeout."""
    return ProfileSession(problem, device=evaluator.device.kind, target=evaluator.target, run_dir=run_dir,
                          timeout=evaluator.timeout)


def _drive(ctx: RunContext, input_code: str, *, resume: bool) -> ForgeState:
    """Invoke (or continue) the graph with SQLite checkpoints beside the run store; the final state."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    from xe_forge.pipeline.graph import build_graph

    serde = JsonPlusSerializer(allowed_msgpack_modules=[(t.__module__, t.__name__) for t in CHECKPOINT_TYPES])
    conn = sqlite3.connect(ctx.run_dir / "checkpoints.sqlite", check_same_thread=False)
    try:
        graph = build_graph(SqliteSaver(conn, serde=serde))
        config: RunnableConfig = {"configurable": {"thread_id": ctx.run_id}, "recursion_limit": 64}
        snapshot = graph.get_state(config)
        if resume and snapshot.next:
            ctx.progress.phase("resume", f"continuing at {', '.join(snapshot.next)}; finished: "
                                         f"{', '.join(snapshot.values.get('done', [])) or 'no stage yet'}")
            graph.invoke(None, config, context=ctx)
        elif resume and snapshot.values.get("stopped") and not budget_spent(ctx):
            ctx.progress.phase("resume", "the budget allows more: continuing with the stages not run")
            graph.update_state(config, {"stopped": None, "final": None, "status": None}, as_node="plan")
            graph.invoke(None, config, context=ctx)
        elif resume and snapshot.values.get("status"):
            ctx.progress.phase("resume", "this run already finished"
                               + (f" ({snapshot.values['stopped']}; give a larger --budget to continue)"
                                  if snapshot.values.get("stopped") else ""))
        else:
            graph.invoke(ForgeState(run_id=ctx.run_id, input_code=input_code, code=input_code), config, context=ctx)
        return ForgeState.model_validate(graph.get_state(config).values)
    finally:
        conn.close()
