"""The Ray backend's parts, without a cluster: the --ray option, what a task carries to a node and back,
and what the driver does when a node is lost. The real two-node cluster runs are in test_ray.py."""

from __future__ import annotations

import io
import os
import socket
import sys
import tarfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from xe_forge import __version__
from xe_forge.batch import ray_backend as rb
from xe_forge.batch.models import BatchRequest, ProblemFile, ProblemJob, ProblemResult
from xe_forge.cli.app import app
from xe_forge.config import RunRequest
from xe_forge.errors import InputError
from xe_forge.problem.kernel import find_spec

from .conftest import PROBLEMS


def _batch(*args: str) -> object:
    return CliRunner().invoke(app, ["batch", str(PROBLEMS), "--device", "cpu", *args])


# ---------------------------------------------------------------- the option

@pytest.mark.parametrize("how", ["flag", "env"])
def test_without_ray_installed_the_option_is_one_message_and_exit_3(offline_env, tmp_path, monkeypatch, how):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    if how == "env":
        monkeypatch.setenv("XE_FORGE_RAY_ADDRESS", "auto")
    result = _batch("--out", str(tmp_path / "out"), *(["--ray", "auto"] if how == "flag" else []))
    assert result.exit_code == 3, result.output
    assert "--ray needs Ray" in result.output and "pip install 'xe-forge[ray]'" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("flag", "env", "expected"), [
    (None, None, None), ("10.0.0.5:6379", None, "10.0.0.5:6379"), (None, "auto", "auto"),
    ("ray://head:10001", "auto", "ray://head:10001"),  # the flag wins over XE_FORGE_RAY_ADDRESS
])
def test_the_address_comes_from_the_flag_else_the_environment(offline_env, tmp_path, monkeypatch, flag, env,
                                                                 expected):
    seen: list[BatchRequest] = []

    def fake_run_batch(request: BatchRequest, progress=None):
        seen.append(request)
        raise InputError("stop here")

    monkeypatch.setattr("xe_forge.batch.runner.run_batch", fake_run_batch)
    if env:
        monkeypatch.setenv("XE_FORGE_RAY_ADDRESS", env)
    result = _batch("--out", str(tmp_path / "out"), *(["--ray", flag] if flag else []))
    assert result.exit_code == 2 and len(seen) == 1
    assert seen[0].ray == expected


def test_an_address_nobody_listens_on_exits_3_at_once(offline_env, tmp_path):
    pytest.importorskip("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the batch tries it
    started = time.monotonic()
    result = _batch("--out", str(tmp_path / "out"), "--ray", f"127.0.0.1:{port}")
    assert result.exit_code == 3, result.output
    assert f"cannot connect to the Ray cluster at '127.0.0.1:{port}'" in result.output
    assert "Traceback" not in result.output and time.monotonic() - started < 60


# ---------------------------------------------------------------- what travels

def _job(tmp_path: Path, *, seed_layout: str = "file") -> ProblemJob:
    """A problem with a seed whose spec only optimize's own lookup would find (`<stem>_spec.yaml`)."""
    problems, seeds = tmp_path / "drv" / "problems", tmp_path / "drv" / "problems" / "seeds"
    seeds.mkdir(parents=True)
    problem = problems / "7_Op.py"
    problem.write_text("# the problem\n")
    seed = seeds / "7_Op.py"
    seed.write_text("# the seed\n")
    (seeds / "7_Op_spec.yaml").write_text("inputs: []\n")
    run = RunRequest(kernel=str(seed), reference=str(problem), run_dir=tmp_path / "drv" / "out" / "runs")
    return ProblemJob(problem=ProblemFile(id=7, name="7_Op", path=str(problem)), run_id="p007-7_Op", run=run,
                      result_path=str(tmp_path / "drv" / "out" / "jobs" / "p007-7_Op.result.json"))


def test_a_task_carries_the_problem_the_seed_and_the_spec_found_beside_it(tmp_path: Path):
    job = _job(tmp_path)
    files = rb._files_of(job.run)
    assert sorted(Path(f.path).name for f in files) == ["7_Op.py", "7_Op.py", "7_Op_spec.yaml"]
    moves = rb._place(files, tmp_path / "node")
    node_run = rb.rebase(job.run, moves)
    assert Path(node_run.kernel).read_text() == "# the seed\n"
    assert Path(node_run.reference).read_text() == "# the problem\n"
    assert node_run.kernel != node_run.reference  # same file name, different driver directories
    assert find_spec(Path(node_run.kernel)).read_text() == "inputs: []\n"  # still beside its seed


def test_rebase_moves_the_innermost_root_first_and_leaves_other_paths():
    run = RunRequest(kernel="/a/seeds/1_X/kernel.py", reference="/a/1_X.py", spec="/elsewhere/s.yaml",
                     run_dir=Path("/a/out/runs"))
    moved = rb.rebase(run, {"/a": "/n/0", "/a/seeds/1_X": "/n/1", "/a/out/runs": "/n/runs"})
    assert (moved.kernel, moved.reference, moved.spec) == ("/n/1/kernel.py", "/n/0/1_X.py", "/elsewhere/s.yaml")
    assert moved.run_dir == Path("/n/runs")
    assert rb.rebase(run, {"/a/seeds/1": "/x"}).kernel == run.kernel  # a name prefix is not a directory


def test_run_directories_come_back_replacing_only_the_problems_own(tmp_path: Path):
    node = tmp_path / "node"
    for name, text in [("p001-A", "new"), ("p001-A-port", "port"), ("p002-B", "other problem")]:
        (node / name).mkdir(parents=True)
        (node / name / "f.txt").write_text(text)
    data = rb._pack(node, ("p001-A", "p001-A-port"))
    driver = tmp_path / "driver"
    (driver / "p001-A").mkdir(parents=True)
    (driver / "p001-A" / "stale.txt").write_text("from an earlier attempt")
    (driver / "p002-B").mkdir()
    (driver / "p002-B" / "f.txt").write_text("kept")
    rb._unpack(data, driver, ("p001-A", "p001-A-port"))
    assert sorted(p.name for p in (driver / "p001-A").iterdir()) == ["f.txt"]
    assert (driver / "p001-A-port" / "f.txt").read_text() == "port"
    assert (driver / "p002-B" / "f.txt").read_text() == "kept"
    assert rb._pack(tmp_path / "empty", ("p001-A",)) == b""


def test_a_reply_cannot_write_outside_its_run_directories(tmp_path: Path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in ("p001-A/ok.txt", "p002-B/planted.txt", "p001-A/../../escape.txt"):
            info = tarfile.TarInfo(name)
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))
    root = tmp_path / "runs"
    with pytest.raises(tarfile.OutsideDestinationError):
        rb._unpack(buffer.getvalue(), root, ("p001-A",))
    assert not (tmp_path / "escape.txt").exists() and not (root / "p002-B").exists()


def test_the_node_gets_the_settings_and_keys_and_nothing_else_of_the_driver(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("XE_FORGE_API_BASE=http://llm.internal/v1\nXE_FORGE_MODEL=from-dotenv\nOTHER=1\n")
    env = {"XE_FORGE_MODEL": "openai/gpt-4.1", "OPENAI_API_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "CUDA_VISIBLE_DEVICES": "3", "PATH": "/driver/bin", "HOME": "/root", "PYTHONUNBUFFERED": "1"}
    assert rb.forwarded(env) == {"XE_FORGE_MODEL": "openai/gpt-4.1", "XE_FORGE_API_BASE": "http://llm.internal/v1",
                                 "OPENAI_API_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                 "PYTHONUNBUFFERED": "1"}


# ---------------------------------------------------------------- the task, run here

def test_the_task_runs_the_problem_in_node_paths_and_sends_driver_paths_back(tmp_path, monkeypatch):
    """What a node does with a task, with the problem process replaced by a stand-in that writes a run
    directory the way optimize does (args.json naming the inputs where the process saw them)."""
    job = _job(tmp_path)
    seen: dict[str, object] = {}

    def fake_run_job(node_job: ProblemJob, job_path: Path, env: dict[str, str], limit: float) -> ProblemResult:
        seen.update(job=node_job, env=env, limit=limit, seed=Path(node_job.run.kernel).read_text())
        run_dir = Path(node_job.run.run_dir) / node_job.run_id
        seen["had_earlier_run"] = (run_dir / "earlier.txt").is_file()
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "args.json").write_text(node_job.run.model_dump_json())
        return ProblemResult(problem_id=7, name="7_Op", run_id=node_job.run_id, status="no improvement", correct=True)

    monkeypatch.setattr("xe_forge.batch.executor.run_job", fake_run_job)
    fake_ray = SimpleNamespace(get_runtime_context=lambda: SimpleNamespace(get_node_id=lambda: "node-abc"))
    monkeypatch.setitem(sys.modules, "ray", fake_ray)
    earlier = tmp_path / "drv" / "out" / "runs" / job.run_id  # a resumed problem: its earlier run travels too
    earlier.mkdir(parents=True)
    (earlier / "earlier.txt").write_text("cached LLM answers")
    task = rb.NodeTask(job=job, files=rb._files_of(job.run), runs=rb._pack(earlier.parent, rb._run_names(job)),
                       env={"XE_FORGE_MODEL": "m"}, time_limit=42.0, version=__version__)

    reply = rb.solve_on_node(task)

    node_job = seen["job"]
    assert seen["seed"] == "# the seed\n" and seen["limit"] == 42.0 and seen["had_earlier_run"]
    assert seen["env"]["XE_FORGE_MODEL"] == "m"
    assert not node_job.run.kernel.startswith(str(tmp_path / "drv"))  # node paths, not the driver's
    assert not Path(node_job.run.run_dir).exists()  # the node's scratch directory is gone
    assert reply.result.node == "node-abc" and reply.result.status == "no improvement"
    back = tmp_path / "back"
    rb._unpack(reply.runs, back, rb._run_names(job))
    args = RunRequest.model_validate_json((back / job.run_id / "args.json").read_text())
    assert (args.kernel, args.reference, args.run_dir) == (job.run.kernel, job.run.reference, job.run.run_dir)
    assert args.spec is None or Path(args.spec).parent == Path(job.run.kernel).parent


def test_a_node_with_another_xe_forge_refuses_the_task(tmp_path):
    job = _job(tmp_path)
    task = rb.NodeTask(job=job, files=[], env={}, time_limit=1.0, version="0.0.0-other")
    with pytest.raises(RuntimeError, match="install the same version on every node"):
        rb.solve_on_node(task)


# ---------------------------------------------------------------- the driver, when nodes are lost

class _FakeRay:
    """ray.get answers from a script: an exception to raise, or a reply."""

    def __init__(self, script: list) -> None:
        self.script, self.submitted = list(script), 0

    def get(self, ref):
        outcome = self.script.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _executor(script: list) -> tuple[rb.RayExecutor, _FakeRay]:
    import threading

    fake = _FakeRay(script)
    executor = object.__new__(rb.RayExecutor)

    def remote(task):
        fake.submitted += 1
        return object()

    executor._ray, executor._running, executor._lock = fake, set(), threading.Lock()
    executor._task, executor.time_limit, executor.slots = SimpleNamespace(remote=remote), 60.0, [{}]
    return executor, fake


def test_a_problem_whose_node_dies_is_resubmitted_and_its_result_kept(tmp_path):
    rx = pytest.importorskip("ray.exceptions")
    job = _job(tmp_path)
    result = ProblemResult(problem_id=7, name="7_Op", status="no improvement", correct=True, node="n2")
    executor, fake = _executor([rx.NodeDiedError("node 1 died"), rx.WorkerCrashedError(),
                                rb.NodeReply(result=result, runs=b"")])
    assert executor.run(job, {}) == result and fake.submitted == 3


def test_a_problem_that_keeps_losing_its_worker_is_crashed_and_the_batch_goes_on(tmp_path):
    rx = pytest.importorskip("ray.exceptions")
    job = _job(tmp_path)
    executor, fake = _executor([rx.OutOfMemoryError("killed by the memory monitor")] * (1 + rb.RETRIES))
    out = executor.run(job, {})
    assert fake.submitted == 1 + rb.RETRIES and out.status == "crashed"
    assert out.reason == f"its Ray worker was lost {1 + rb.RETRIES} times; last: killed by the memory monitor"


def test_a_task_that_fails_inside_ray_is_an_environment_failure_retried_on_resume(tmp_path):
    rx = pytest.importorskip("ray.exceptions")
    job = _job(tmp_path)
    err = rx.RayTaskError("solve_on_node", "Traceback ...\nRuntimeError: this node has xe-forge 0.0.9",
                          RuntimeError("this node has xe-forge 0.0.9"))
    executor, fake = _executor([err])
    out = executor.run(job, {})
    assert fake.submitted == 1 and out.status == "failed" and out.exit_code == 3
    assert out.reason.startswith("Ray could not run the problem:") and "0.0.9" in out.reason


def test_a_task_removes_the_scratch_of_workers_that_died_mid_task_and_only_theirs(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = tmp_path / f"{rb.SCRATCH}{gone.pid}-x1"
    live = tmp_path / f"{rb.SCRATCH}{os.getpid()}-x2"  # a task running in this process
    other = tmp_path / "xe-forge-judge-x3"
    for d in (dead, live, other):
        d.mkdir()
    rb._remove_orphaned_scratch()
    assert not dead.exists() and live.exists() and other.exists()


# ---------------------------------------------------------------- what each task asks of the cluster

class _FakeCluster(SimpleNamespace):
    """The few calls RayExecutor makes at start, against a cluster of the given resources."""

    def __init__(self, resources: dict[str, float]) -> None:
        super().__init__(resources=resources, options=None, shut=False, address=None)

    def init(self, address, **kw):
        self.address = address

    def cluster_resources(self):
        return self.resources

    def remote(self, **options):
        self.options = options
        return lambda fn: SimpleNamespace(remote=fn)

    def shutdown(self):
        self.shut = True


@pytest.mark.parametrize(("device", "resources", "workers", "asks", "slots"), [
    ("cpu", {"CPU": 6.0, "GPU": 2.0}, None, {"num_cpus": 1}, 6),  # --device cpu never takes a GPU
    ("auto", {"CPU": 6.0, "GPU": 2.0}, None, {"num_gpus": 1}, 2),
    ("auto", {"CPU": 3.0}, None, {"num_cpus": 1}, 3),
    ("cuda", {"CPU": 64.0, "GPU": 16.0}, 20, {"num_gpus": 1}, 20),  # --workers: more in flight, for an autoscaler
])
def test_each_task_asks_for_one_gpu_or_one_cpu_and_the_slots_follow(monkeypatch, device, resources, workers, asks,
                                                                    slots):
    fake = _FakeCluster(resources)
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # "auto" would probe it
    executor = rb.RayExecutor("auto", device, workers, 30.0)
    assert fake.options == {"max_retries": 0, **asks} and len(executor.slots) == slots and not fake.shut


def test_a_gpu_device_on_a_cluster_without_gpus_is_an_environment_error(monkeypatch):
    fake = _FakeCluster({"CPU": 8.0})
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(rb.EnvError, match="has no GPU") as err:
        rb.RayExecutor("auto", "xpu", None, 30.0)
    assert err.value.exit_code == 3 and fake.shut  # disconnected again


def test_stopping_the_batch_cancels_running_tasks_by_force(tmp_path):
    rx = pytest.importorskip("ray.exceptions")
    import threading

    job = _job(tmp_path)
    cancelled = threading.Event()
    executor, fake = _executor([])
    forced: list[bool] = []

    def get(ref):
        cancelled.wait(10)
        raise rx.TaskCancelledError()

    def cancel(ref, force=False):
        forced.append(force)
        cancelled.set()

    fake.get, fake.cancel = get, cancel
    box: dict[str, ProblemResult] = {}
    thread = threading.Thread(target=lambda: box.update(r=executor.run(job, {})))
    thread.start()
    while not executor._running:
        time.sleep(0.01)
    executor.stop()
    thread.join(10)
    assert forced == [True] and box["r"].reason == "cancelled: the batch was stopped" and not executor._running
