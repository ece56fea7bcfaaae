"""`xe-forge batch --ray ADDRESS`: each problem a Ray task on a cluster; the batch store stays on the driver.

A task runs the same problem process as a local worker (executor.run_job: `python -m xe_forge.batch.child`
under the per-problem time limit, its crash recorded as 'crashed'), on whichever node Ray gives it, with
one GPU (`num_gpus=1`, Ray makes it the only visible one) or, on a CPU cluster, one CPU. Tasks rather
than an actor per GPU: a problem holds its GPU for minutes, so Ray's per-task scheduling costs nothing
that matters; a task's worker holds no state a lost node could take with it; and the cluster's own
scheduler (and autoscaler) sees each problem waiting, where actors pinned per GPU would hide that.

Nothing is assumed shared between the driver and the nodes but the installed package: the problem's
files travel with its task, and its run directories come back in the reply and land in the driver's
`--out/runs/` (their args.json rewritten to the driver's paths, so `optimize --resume` works there). A
node or worker lost under a task (a dead node, the OOM killer) is not the problem's doing: the task is
resubmitted, up to RETRIES more times, wherever Ray places it. The driver is the only writer of
batch.sqlite, so `--resume` after a killed driver works as for a local batch. docs/RAY.md says how to
point it at a cluster.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import socket
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xe_forge import __version__
from xe_forge.batch import executor
from xe_forge.batch.models import ProblemJob, ProblemResult
from xe_forge.config import PROVIDER_KEY_VARS, RunRequest
from xe_forge.errors import EnvError
from xe_forge.problem.kernel import find_spec

RETRIES = 2  # resubmissions of a problem whose Ray worker or node was lost under it
SCRATCH = "xe-forge-ray-"  # + the Ray worker's pid: a node's scratch directories, one per running task
FORWARDED_PREFIXES = ("XE_FORGE_", "LITELLM_")  # with the provider key variables: what the child reads


class ShippedFile(BaseModel):
    path: str  # where it lives on the driver
    data: bytes


class NodeTask(BaseModel):
    """What a Ray task gets: the job as the driver wrote it, and everything the node cannot read itself."""

    job: ProblemJob
    files: list[ShippedFile]
    runs: bytes = b""  # the problem's run directories from an earlier attempt (tar.gz), for a resumed problem
    env: dict[str, str]
    time_limit: float
    version: str


class NodeReply(BaseModel):
    result: ProblemResult
    runs: bytes  # the problem's run directories (tar.gz), args.json already in the driver's paths


class RayExecutor:
    """executor.Executor on a Ray cluster: `slots` tasks in flight, one problem each."""

    def __init__(self, address: str, device: str, workers: int | None, time_limit: float) -> None:
        ray = import_ray()
        try:
            _check_reachable(address)
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (OSError, RuntimeError, ValueError) as err:  # refused, timed out, unknown host, no cluster
            raise EnvError(f"cannot connect to the Ray cluster at '{address}': {str(err).splitlines()[0]}",
                           hint="start one (`ray start --head`), or give its address: --ray HOST:6379 "
                                "(or ray://HOST:10001), XE_FORGE_RAY_ADDRESS") from None
        try:
            resources, self.time_limit = ray.cluster_resources(), time_limit
            gpus = int(resources.get("GPU", 0))
            use_gpu = device in ("cuda", "xpu") or (device == "auto" and gpus > 0)
            if use_gpu and gpus == 0:
                raise EnvError(f"--device {device}: the Ray cluster at '{address}' has no GPU")
            capacity = gpus if use_gpu else int(resources.get("CPU", 0))
            self.slots: list[dict[str, str]] = [{} for _ in range(workers or max(1, capacity))]
            need: dict[str, Any] = {"num_gpus": 1} if use_gpu else {"num_cpus": 1}
            self._task = ray.remote(max_retries=0, **need)(solve_on_node)
        except BaseException:
            ray.shutdown()
            raise
        self._ray, self._running, self._lock = ray, set(), threading.Lock()

    def run(self, job: ProblemJob, env: dict[str, str]) -> ProblemResult:
        from ray import exceptions as rx

        runs_root = Path(job.run.run_dir)
        names = _run_names(job)
        task = NodeTask(job=job, files=_files_of(job.run), runs=_pack(runs_root, names), env=forwarded(env),
                        time_limit=self.time_limit, version=__version__)
        lost = []
        for _ in range(1 + RETRIES):
            ref = self._task.remote(task)
            with self._lock:
                self._running.add(ref)
            try:
                reply: NodeReply = self._ray.get(ref)
            except (rx.WorkerCrashedError, rx.NodeDiedError, rx.OutOfMemoryError, rx.ObjectLostError,
                    rx.LocalRayletDiedError) as err:
                lost.append(str(err).splitlines()[0])
                continue
            except rx.TaskCancelledError:
                return ProblemResult.failed(job.problem, job.run_id, "failed", "cancelled: the batch was stopped")
            except rx.RayError as err:  # e.g. the node has no (or another) xe-forge: retried on --resume
                return ProblemResult.failed(job.problem, job.run_id, "failed",
                                            f"Ray could not run the problem: {_last_line(err)}", exit_code=3)
            finally:
                with self._lock:
                    self._running.discard(ref)
            _unpack(reply.runs, runs_root, names)
            return reply.result
        return ProblemResult.failed(job.problem, job.run_id, "crashed",
                                    f"its Ray worker was lost {len(lost)} times; last: {lost[-1]}")

    def stop(self) -> None:
        with self._lock:
            running = list(self._running)
        for ref in running:  # force: the worker dies, and its problem process with it (child._end_with_parent)
            self._ray.cancel(ref, force=True)

    def close(self) -> None:
        self._ray.shutdown()


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise EnvError("--ray needs Ray on this machine",
                       hint="pip install 'xe-forge[ray]' (the same Ray version as the cluster)") from None
    return ray


def _check_reachable(address: str) -> None:
    """A HOST:PORT nobody listens on fails here at once; ray.init would retry it for minutes."""
    target = os.environ.get("RAY_ADDRESS", "") if address == "auto" else address
    host, _, port = target.removeprefix("ray://").rpartition(":")
    if host and port.isdigit():
        with socket.create_connection((host, int(port)), timeout=10):
            pass


def solve_on_node(task: NodeTask) -> NodeReply:
    """The Ray task: the problem's files in a scratch directory, its process run there, the runs sent back."""
    import ray

    if task.version != __version__:
        raise RuntimeError(f"this node has xe-forge {__version__}, the driver {task.version}: install the same "
                           "version on every node")
    _remove_orphaned_scratch()
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH}{os.getpid()}-")).resolve()
    try:
        here = _place(task.files, scratch / "in")
        runs = scratch / "runs"
        runs.mkdir()
        here[str(task.job.run.run_dir)] = str(runs)
        back = {node: driver for driver, node in here.items()}
        _unpack(task.runs, runs, _run_names(task.job))
        _rebase_runs(runs, here)
        job = task.job.model_copy(update={"run": rebase(task.job.run, here),
                                          "result_path": str(scratch / "job.result.json")})
        result = executor.run_job(job, scratch / "job.json", {**os.environ, **task.env}, task.time_limit)
        result.node = ray.get_runtime_context().get_node_id()
        _rebase_runs(runs, back)
        return NodeReply(result=result, runs=_pack(runs, _run_names(task.job)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _remove_orphaned_scratch() -> None:
    """Scratch directories of Ray workers that died mid-task (killed, OOM) on this node: their owner's
    pid is in the name, and a directory whose owner is gone is nobody's."""
    for path in Path(tempfile.gettempdir()).glob(f"{SCRATCH}*-*"):
        pid = path.name[len(SCRATCH):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def forwarded(env: dict[str, str]) -> dict[str, str]:
    """What a problem process reads from its environment: XE_FORGE_* (also from the driver's .env), the
    provider key variables, LiteLLM's. Nothing else of the driver's (its CUDA_VISIBLE_DEVICES, PATH...)."""
    from dotenv import dotenv_values

    from_file = {k: v for k, v in dotenv_values(".env").items() if k.upper().startswith("XE_FORGE_") and v}
    given = {k: v for k, v in env.items()
             if k.startswith(FORWARDED_PREFIXES) or k in PROVIDER_KEY_VARS or k == "PYTHONUNBUFFERED"}
    return {**from_file, **given}


def rebase(run: RunRequest, moves: dict[str, str]) -> RunRequest:
    """The same request with every path under a moved root (a shipped file, the runs directory) moved."""

    def move(path: str | None) -> str | None:
        for old, new in sorted(moves.items(), key=lambda m: -len(m[0])):  # the innermost root first
            if path and (path == old or path.startswith(old + os.sep)):
                return new + path[len(old):]
        return path

    return run.model_copy(update={"kernel": move(run.kernel) or "", "reference": move(run.reference),
                                  "spec": move(run.spec), "run_dir": Path(move(str(run.run_dir)) or run.run_dir)})


def _rebase_runs(runs: Path, moves: dict[str, str]) -> None:
    """args.json of each run directory: what `optimize --resume` reads its inputs from."""
    for args in runs.glob("*/args.json"):
        request = RunRequest.model_validate_json(args.read_text())
        args.write_text(rebase(request, moves).model_dump_json(indent=2))


def _files_of(run: RunRequest) -> list[ShippedFile]:
    """The problem file, the seed and its spec (or the one optimize would find beside the seed)."""
    beside = find_spec(Path(run.kernel)) if run.kernel and not run.spec else None
    paths = dict.fromkeys(p for p in (run.reference, run.kernel, run.spec, beside and str(beside)) if p)
    return [ShippedFile(path=p, data=Path(p).read_bytes()) for p in paths]


def _place(files: list[ShippedFile], root: Path) -> dict[str, str]:
    """Each file under root, files of one driver directory together (a seed beside its spec stays so);
    returns {driver directory: node directory}."""
    dirs: dict[str, str] = {}
    for file in files:
        parent = os.path.dirname(file.path)
        node_dir = Path(dirs.setdefault(parent, str(root / str(len(dirs)))))
        node_dir.mkdir(parents=True, exist_ok=True)
        (node_dir / Path(file.path).name).write_bytes(file.data)
    return dirs


def _run_names(job: ProblemJob) -> tuple[str, ...]:
    return job.run_id, f"{job.run_id}-port"  # optimize's run, and batch/port.py's when it had no seed


def _pack(root: Path, names: tuple[str, ...]) -> bytes:
    present = [n for n in names if (root / n).is_dir()]
    if not present:
        return b""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in present:
            tar.add(root / name, arcname=name)
    return buffer.getvalue()


def _unpack(data: bytes, root: Path, names: tuple[str, ...]) -> None:
    """Replace the run directories `names` under root with those in `data` (nothing else is extracted)."""
    if not data:
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = [m for m in tar.getmembers() if m.name.split("/")[0] in names]
        for name in {m.name.split("/")[0] for m in members}:
            shutil.rmtree(root / name, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        tar.extractall(root, members=members, filter="data")


def _last_line(err: Exception) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__
