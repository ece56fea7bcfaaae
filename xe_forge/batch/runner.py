"""`xe-forge batch`: many KernelBench-format problems, one worker per GPU, resumable.

Each problem runs in its own process (`python -m xe_forge.batch.child`) that sees only its worker's
GPU, under a time limit; a crash or hang ends that process, never the batch. Everything is recorded
in one SQLite file (batch.sqlite) so `--resume` skips finished problems and an unfinished one
continues its own run (whose LLM cache replays answers already paid for).

Where a problem's process runs is the executor's business (the seam, `executor.Executor`):
`executor.LocalExecutor` (this machine's GPUs), or `ray_backend.RayExecutor` (`--ray`: a Ray task per
problem on a cluster); both run `executor.run_job`. The driver side (which
problems, the store, resume, the report) is the same for both.
"""

from __future__ import annotations

import os
import queue
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xe_forge import targets
from xe_forge.batch.executor import Executor, LocalExecutor, finished_result
from xe_forge.batch.models import BatchRequest, ProblemFile, ProblemJob, ProblemResult
from xe_forge.batch.ray_backend import RayExecutor
from xe_forge.batch.report import summarize, write_batch_report
from xe_forge.batch.store import BatchStore
from xe_forge.errors import EnvError, InputError
from xe_forge.paths import data_dir
from xe_forge.pipeline.status import STATUSES
from xe_forge.problem.kernel import find_spec

if TYPE_CHECKING:
    from xe_forge.pipeline.progress import BatchProgress

PROBLEM_ENTRY = re.compile(r"^(\d+)_(.+?)(\.py)?$")
FINAL = (*STATUSES, "skipped", "failed", "timeout", "crashed")


def parse_only(text: str | None) -> set[int] | None:
    """'1-20,37' -> {1..20, 37}; None keeps every problem."""
    if not text:
        return None
    ids: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise InputError(f"--only: '{part}' is not an id or a range like 1-20")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise InputError(f"--only: '{part}' is an empty range (write the lower id first)")
        ids.update(range(lo, hi + 1))
    return ids


def discover_problems(directory: Path, only: set[int] | None) -> list[ProblemFile]:
    """Problems in either layout: KernelBench files `<id>_<Ops>.py`, or folders `<id>_<Ops>/` as in examples/
    (kernel_pytorch.py the reference, kernel.py the seed, a spec named as `check` looks for it)."""
    if not directory.is_dir():
        raise InputError(f"problems directory not found: {directory}")
    found: dict[int, ProblemFile] = {}
    for path in sorted(directory.iterdir()):
        m = PROBLEM_ENTRY.match(path.name)
        problem = _problem_file(path, int(m.group(1))) if m else None
        if problem is None or (only is not None and problem.id not in only):
            continue
        if problem.id in found:
            raise InputError(f"two problems with id {problem.id} in {directory}: {found[problem.id].name} and "
                             f"{problem.name}")
        found[problem.id] = problem
    if not found:
        raise InputError(f"no problems in {directory}" + (" matching --only" if only else ""),
                         hint="problems are KernelBench files like '12_Gemm_Multiply_LeakyReLU.py', or folders "
                              "like examples/12_Gemm_Multiply_LeakyReLU/ holding kernel_pytorch.py (reference), "
                              "kernel.py (seed) and spec.yaml")
    return sorted(found.values(), key=lambda p: p.id)


def _problem_file(path: Path, pid: int) -> ProblemFile | None:
    if path.is_file() and path.suffix == ".py":
        return ProblemFile(id=pid, name=path.stem, path=str(path.resolve()))
    if not path.is_dir():
        return None
    reference, seed = path / "kernel_pytorch.py", path / "kernel.py"
    if not reference.is_file():
        return None
    spec = find_spec(seed)
    return ProblemFile(id=pid, name=path.name, path=str(reference.resolve()),
                       seed=str(seed.resolve()) if seed.is_file() else None,
                       spec=str(spec.resolve()) if spec else None)


def find_seed(seeds_dir: Path, problem_id: int) -> tuple[str | None, str | None]:
    """A seed by id: examples layout `<id>_*/kernel.py` (+ spec.yaml), or a file `<id>_*.py`."""
    if not seeds_dir.is_dir():
        return None, None
    for entry in sorted(seeds_dir.iterdir()):
        m = re.match(r"^(\d+)_", entry.name)
        if not m or int(m.group(1)) != problem_id:
            continue
        kernel = entry / "kernel.py" if entry.is_dir() else entry
        if kernel.is_file() and kernel.suffix == ".py" and not kernel.stem.endswith("_pytorch"):
            # a folder's spec is found as `check` finds it; a flat directory's `spec.yaml` is nobody's in particular
            spec = find_spec(kernel) if entry.is_dir() else next(
                (p for p in (kernel.with_suffix(".yaml"), kernel.with_name(f"{kernel.stem}_spec.yaml")) if p.is_file()),
                None)
            return str(kernel.resolve()), str(spec.resolve()) if spec else None
    return None, None


def device_slots(device: str, workers: int | None) -> list[dict[str, str]]:
    """One environment per worker: the GPU it owns made the only visible one; CPU workers share."""
    kind = device
    if device == "auto":
        kind = targets.get_device("auto").kind
    if kind in ("cuda", "xpu"):
        import torch

        count = getattr(torch, kind).device_count()
        if count == 0:
            raise EnvError(f"no {kind} device visible")
        var = "CUDA_VISIBLE_DEVICES" if kind == "cuda" else "ZE_AFFINITY_MASK"
        # a batch started with the variable set owns only those GPUs: worker i gets the i-th of them
        given = [v.strip() for v in os.environ.get(var, "").split(",") if v.strip()]
        names = given if len(given) == count else [str(i) for i in range(count)]
        return [{var: names[i % count]} for i in range(workers or count)]
    return [{} for _ in range(max(1, workers or 1))]


def _executor(opts: BatchRequest) -> Executor:
    if opts.ray:
        return RayExecutor(opts.ray, opts.run.device, opts.workers, opts.time_limit)
    return LocalExecutor(device_slots(opts.run.device, opts.workers), opts.time_limit)


def _adopt_finished(store: BatchStore, out: Path, problems: list[ProblemFile]) -> None:
    """A problem left 'running' whose process had already written its result (the batch was stopped
    between the two) is finished: record it, so --resume does not run it again."""
    for p in problems:
        if store.status(p.id) == "running":
            result = finished_result(out / "jobs" / f"{_run_id(p)}.result.json")
            if result is not None:
                store.finish(p.id, result)


def run_batch(opts: BatchRequest, progress: BatchProgress | None = None) -> dict[str, Any]:
    """Run the batch; on Ctrl-C, stop every problem process, keep what finished, and return the partial
    summary (`interrupted`: True) for the caller to show."""
    problems = discover_problems(Path(opts.problems_dir), parse_only(opts.only))  # bad input: no out dir made
    out = Path(opts.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    seeds_dir = Path(opts.seeds_dir) if opts.seeds_dir else data_dir("examples")
    store = BatchStore(out / "batch.sqlite")
    if not opts.resume and store.results():
        raise InputError(f"{out} already holds a batch", hint="pass --resume to continue it, or choose another --out")
    _adopt_finished(store, out, problems)
    env_failed = {r["id"] for r in store.results() if r.get("exit_code") == 3}  # e.g. LLM unreachable: retry
    todo = [p for p in problems if not (opts.resume and store.status(p.id) in FINAL and p.id not in env_failed)]
    executor = _executor(opts)
    slots = executor.slots
    jobs: queue.Queue[ProblemFile] = queue.Queue()
    for p in todo:
        jobs.put(p)
    if progress:
        progress.start(len(problems), len(problems) - len(todo), len(slots))

    stopping = threading.Event()

    def worker(index: int, slot: dict[str, str]) -> None:
        env = {**os.environ, **slot, "PYTHONUNBUFFERED": "1"}
        while not stopping.is_set():
            try:
                problem = jobs.get_nowait()
            except queue.Empty:
                return
            store.start(problem, index)
            if progress:
                progress.problem_started(problem, index)
            try:
                result = _solve(problem, opts, seeds_dir, out, env, executor)
            except Exception as exc:  # the runner's own failure on one problem must not end this worker
                result = ProblemResult.failed(problem, None, "failed", f"batch runner error: {type(exc).__name__}: {exc}")
            if stopping.is_set():  # stays 'running' unless its process wrote a result first (_adopt_finished)
                return
            store.finish(problem.id, result)
            if progress:
                progress.problem_done(problem, result)

    threads = [threading.Thread(target=worker, args=(i, s), daemon=True) for i, s in enumerate(slots)]
    started = time.monotonic()
    interrupted = False
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:  # keep what finished; the caller shows the partial summary
        interrupted = True
        stopping.set()
        executor.stop()
        for t in threads:
            t.join(timeout=30)
    except BaseException:
        stopping.set()
        executor.stop()
        raise
    finally:
        executor.close()
    _adopt_finished(store, out, problems)
    results = [r for r in store.results() if r["id"] in {p.id for p in problems}]
    results += [{"id": p.id, "name": p.name, "status": None} for p in problems
                if p.id not in {r["id"] for r in results}]  # never started: listed as unfinished
    summary = summarize(sorted(results, key=lambda r: r["id"]), wall_seconds=time.monotonic() - started,
                        workers=len(slots), ran=len(todo), interrupted=interrupted,
                        count_degenerate=opts.count_degenerate)
    write_batch_report(out, summary, results)
    return summary


def _run_id(problem: ProblemFile) -> str:
    return f"p{problem.id:03d}-{problem.name[:40]}"


def _solve(problem: ProblemFile, opts: BatchRequest, seeds_dir: Path, out: Path, env: dict[str, str],
           executor: Executor | None = None) -> ProblemResult:
    """One problem in its own process, where the executor runs it; a problem folder's own seed wins."""
    if opts.no_seeds or opts.port_only:
        seed, spec = None, problem.spec
    else:
        seed, spec = (problem.seed, problem.spec) if problem.seed else find_seed(seeds_dir, problem.id)
    run_id = _run_id(problem)
    result_path = out / "jobs" / f"{run_id}.result.json"
    result_path.parent.mkdir(parents=True, exist_ok=True)
    # the problem's process sees only its worker's GPU: the device kind passes through unchanged
    run = opts.run.model_copy(update={"kernel": seed or "", "reference": problem.path, "spec": spec,
                                      "run_dir": out / "runs"})
    job = ProblemJob(problem=problem, run_id=run_id, run=run, compile=opts.compile, port_only=opts.port_only,
                     result_path=str(result_path))
    return (executor or LocalExecutor([env], opts.time_limit)).run(job, env)
