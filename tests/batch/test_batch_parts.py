"""The batch runner's parts, without problem processes: --only, discovery, seeds, device slots, the store.

These run in milliseconds; the runs that spawn real problem processes are in test_batch_runs.py.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from xe_forge.batch import executor as batch_executor
from xe_forge.batch import runner as batch
from xe_forge.batch.models import BatchRequest, ProblemFile, ProblemJob, ProblemResult
from xe_forge.batch.runner import (
    device_slots,
    discover_problems,
    find_seed,
    parse_only,
)
from xe_forge.batch.store import BatchStore
from xe_forge.config import RunRequest
from xe_forge.errors import EnvError, InputError
from xe_forge.paths import data_dir

from .conftest import PROBLEMS, SEEDS

# ---------------------------------------------------------------- --only

@pytest.mark.parametrize(("text", "ids"), [
    ("1-3,7", {1, 2, 3, 7}),
    ("37", {37}),
    (" 5 , 2-2 ,9-10", {2, 5, 9, 10}),
    ("1-20,37", set(range(1, 21)) | {37}),
])
def test_parse_only_reads_ids_and_ranges(text: str, ids: set[int]):
    assert parse_only(text) == ids


@pytest.mark.parametrize("text", [None, ""])
def test_parse_only_without_text_keeps_everything(text: str | None):
    assert parse_only(text) is None


@pytest.mark.parametrize("text", ["a", "1-", "-4", "3-x", "1,,2", "1..3", "1-3-5", "2 3", "7-3"])
def test_parse_only_rejects_bad_input(text: str):
    with pytest.raises(InputError, match="--only"):
        parse_only(text)


# ---------------------------------------------------------------- discovery

def test_discover_finds_the_fixture_problems_in_id_order():
    found = discover_problems(PROBLEMS, None)
    assert [p.id for p in found] == [1, 2, 3, 4, 5]
    assert found[0].name == "1_Scale_Shift" and Path(found[0].path).is_absolute()


def test_discover_ignores_other_files_and_sorts_numerically(tmp_path: Path):
    for name in ("10_B.py", "9_A.py", "100_C.py", "README.md", "__init__.py", "x_1.py", "3_D.txt", "4_E_pytorch.pyc"):
        (tmp_path / name).write_text("")
    (tmp_path / "5_Dir.py").mkdir()  # a directory named like a problem file is not one
    assert [p.id for p in discover_problems(tmp_path, None)] == [9, 10, 100]
    assert [p.name for p in discover_problems(tmp_path, {9, 100, 42})] == ["9_A", "100_C"]


def test_discover_missing_dir_and_empty_selection_are_input_errors(tmp_path: Path):
    with pytest.raises(InputError, match="not found"):
        discover_problems(tmp_path / "nope", None)
    with pytest.raises(InputError, match="matching --only"):
        discover_problems(PROBLEMS, {99})
    with pytest.raises(InputError, match="no problems in"):
        discover_problems(tmp_path, None)


def test_discover_the_examples_layout_a_folder_per_problem():
    found = discover_problems(data_dir("examples"), {1, 12, 99})
    assert [p.id for p in found] == [1, 12, 99]
    twelve = found[1]
    assert twelve.name == "12_Gemm_Multiply_LeakyReLU" and twelve.path.endswith("12_Gemm_Multiply_LeakyReLU/kernel_pytorch.py")
    assert twelve.seed.endswith("12_Gemm_Multiply_LeakyReLU/kernel.py") and twelve.spec.endswith("spec.yaml")
    assert len(discover_problems(data_dir("examples"), None)) == 20


def test_discover_folders_and_files_side_by_side(tmp_path: Path):
    own = tmp_path / "7_Own"
    own.mkdir()
    (own / "kernel_pytorch.py").write_text("")
    (own / "kernel.py").write_text("")
    (own / "kernel_spec.yaml").write_text("")  # any name `check` would find
    (tmp_path / "8_NoSeed").mkdir()
    (tmp_path / "8_NoSeed" / "kernel_pytorch.py").write_text("")
    (tmp_path / "9_NotAProblem").mkdir()  # no reference: not a problem
    (tmp_path / "10_File.py").write_text("")
    found = {p.id: p for p in discover_problems(tmp_path, None)}
    assert sorted(found) == [7, 8, 10]
    assert found[7].seed == str(own / "kernel.py") and found[7].spec == str(own / "kernel_spec.yaml")
    assert found[8].seed is None and found[8].spec is None and found[10].seed is None


def test_discover_refuses_two_problems_with_one_id(tmp_path: Path):
    (tmp_path / "3_A.py").write_text("")
    (tmp_path / "3_B").mkdir()
    (tmp_path / "3_B" / "kernel_pytorch.py").write_text("")
    with pytest.raises(InputError, match="two problems with id 3"):
        discover_problems(tmp_path, None)


def test_a_problem_folder_seed_wins_over_seeds_dir(tmp_path: Path, monkeypatch):
    """The seed and spec in the problem's own folder are the ones its job runs with."""
    jobs = []

    def child(job_path, env, limit):
        jobs.append(ProblemJob.model_validate_json(Path(job_path).read_text()))
        return "crashed", "stub"

    monkeypatch.setattr(batch_executor, "_run_child", child)
    problem = discover_problems(data_dir("examples"), {12})[0]
    opts = BatchRequest(problems_dir=str(data_dir("examples")), seeds_dir=str(SEEDS), out=str(tmp_path),
                        run=RunRequest(device="cpu"))
    batch._solve(problem, opts, SEEDS, tmp_path, {})
    assert jobs[0].run.kernel == problem.seed and jobs[0].run.spec == problem.spec
    assert jobs[0].run.reference == problem.path


# ---------------------------------------------------------------- seeds

def test_find_seed_examples_layout_with_spec():
    kernel, spec = find_seed(SEEDS, 1)
    assert kernel == str((SEEDS / "1_Scale_Shift" / "kernel.py").resolve())
    assert spec == str((SEEDS / "1_Scale_Shift" / "spec.yaml").resolve())


def test_find_seed_bundled_examples_are_the_default_layout():
    kernel, spec = find_seed(data_dir("examples"), 12)
    assert kernel and kernel.endswith("12_Gemm_Multiply_LeakyReLU/kernel.py") and spec.endswith("spec.yaml")


def test_find_seed_flat_file_layout(tmp_path: Path):
    (tmp_path / "7_Foo_pytorch.py").write_text("")  # a reference beside the seed is never the seed
    (tmp_path / "7_Foo.py").write_text("")
    (tmp_path / "7_Foo.yaml").write_text("")
    (tmp_path / "8_Bar.py").write_text("")
    assert find_seed(tmp_path, 7) == (str(tmp_path / "7_Foo.py"), str(tmp_path / "7_Foo.yaml"))
    assert find_seed(tmp_path, 8) == (str(tmp_path / "8_Bar.py"), None)


def test_find_seed_matches_the_whole_id_only(tmp_path: Path):
    (tmp_path / "17_Other").mkdir()
    (tmp_path / "17_Other" / "kernel.py").write_text("")
    (tmp_path / "1_Empty").mkdir()  # a directory without kernel.py is not a seed
    assert find_seed(tmp_path, 1) == (None, None)
    assert find_seed(tmp_path, 17)[0].endswith("17_Other/kernel.py")
    assert find_seed(tmp_path, 17)[1] is None


def test_find_seed_none_for_missing_seed_or_dir(tmp_path: Path):
    assert find_seed(SEEDS, 5) == (None, None)
    assert find_seed(tmp_path / "absent", 1) == (None, None)


# ---------------------------------------------------------------- device slots

@pytest.mark.parametrize("workers", [None, 1, 3])
def test_cpu_slots_are_empty_environments(workers: int | None):
    assert device_slots("cpu", workers) == [{}] * (workers or 1)


def _fake_device(monkeypatch: pytest.MonkeyPatch, kind: str, count: int) -> None:
    import torch

    import xe_forge.targets

    monkeypatch.setattr(xe_forge.targets, "get_device", lambda *a, **k: SimpleNamespace(kind=kind))
    monkeypatch.setattr(getattr(torch, kind), "device_count", lambda: count, raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("ZE_AFFINITY_MASK", raising=False)


def test_auto_on_a_cpu_machine_gives_cpu_slots(monkeypatch: pytest.MonkeyPatch):
    import xe_forge.targets

    monkeypatch.setattr(xe_forge.targets, "get_device", lambda *a, **k: SimpleNamespace(kind="cpu"))
    assert device_slots("auto", 2) == [{}, {}]


@pytest.mark.parametrize(("kind", "var"), [("cuda", "CUDA_VISIBLE_DEVICES"), ("xpu", "ZE_AFFINITY_MASK")])
@pytest.mark.parametrize(("workers", "gpus"), [
    (None, ["0", "1"]),  # one worker per GPU
    (1, ["0"]),
    (2, ["0", "1"]),
    (4, ["0", "1", "0", "1"]),  # more workers than GPUs: shared round-robin
])
def test_gpu_slots_give_each_worker_one_visible_gpu(monkeypatch, kind, var, workers, gpus):
    _fake_device(monkeypatch, kind, 2)
    assert device_slots("auto", workers) == [{var: g} for g in gpus]
    assert device_slots(kind, workers) == [{var: g} for g in gpus]  # an explicit kind skips detection


def test_two_workers_can_share_one_gpu(monkeypatch: pytest.MonkeyPatch):
    _fake_device(monkeypatch, "cuda", 1)
    assert device_slots("auto", 2) == [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "0"}]


@pytest.mark.parametrize(("kind", "var", "visible"), [
    ("cuda", "CUDA_VISIBLE_DEVICES", "2,3"), ("xpu", "ZE_AFFINITY_MASK", "1,3")])
def test_gpu_slots_stay_within_the_gpus_the_batch_was_given(monkeypatch, kind, var, visible):
    """The parent's own restriction holds: worker i gets the i-th GPU the batch sees, not physical GPU i."""
    _fake_device(monkeypatch, kind, 2)
    monkeypatch.setenv(var, visible)
    assert device_slots("auto", None) == [{var: g} for g in visible.split(",")]
    assert device_slots("auto", 3) == [{var: g} for g in visible.split(",") + visible.split(",")[:1]]


def test_gpu_kind_without_devices_is_an_env_error(monkeypatch: pytest.MonkeyPatch):
    _fake_device(monkeypatch, "cuda", 0)
    with pytest.raises(EnvError, match="no cuda device"):
        device_slots("auto", None)


# ---------------------------------------------------------------- store

def test_store_counts_attempts_and_keeps_results(tmp_path: Path):
    store = BatchStore(tmp_path / "b.sqlite")
    p = ProblemFile(id=3, name="3_X", path="/x/3_X.py")
    assert store.status(3) is None
    store.start(p, 1)
    assert store.status(3) == "running"
    store.finish(3, ProblemResult.failed(p, None, "failed", "boom"))
    store.start(p, 0)
    store.finish(3, ProblemResult(problem_id=3, name="3_X", status="no improvement", correct=True))
    (row,) = BatchStore(tmp_path / "b.sqlite").results()  # a fresh connection sees what was committed
    assert row["attempts"] == 2 and row["worker"] == 0 and row["status"] == "no improvement" and row["correct"]
    assert "reason" not in row  # the result of the last attempt replaces the earlier one


def test_a_problem_process_that_dies_is_recorded_as_crashed(tmp_path: Path):
    """The child exiting non-zero (here: a job file it cannot read) becomes 'crashed' with the output's tail."""
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"problem_id": 1}))
    status, reason = batch_executor._run_child(job, dict(os.environ), 120)
    assert status == "crashed"
    assert reason.startswith("problem process exited with 1:") and "Field required" in reason


def test_a_problem_process_killed_by_a_signal_is_recorded_as_crashed(tmp_path: Path, monkeypatch):
    """A hard crash (SIGABRT, as os.abort or a driver fault gives) keeps the last lines it printed."""
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\necho 'loading the seed'\necho 'Fatal Python error: Aborted'\nkill -ABRT $$\n")
    fake_python.chmod(0o755)
    monkeypatch.setattr(batch_executor.sys, "executable", str(fake_python))
    status, reason = batch_executor._run_child(tmp_path / "job.json", dict(os.environ), 60)
    assert status == "crashed"
    assert reason == "problem process exited with -6: loading the seed | Fatal Python error: Aborted"


def _fake_child(tmp_path: Path, monkeypatch, script: str) -> Path:
    """A stand-in problem process: `script` runs in sh with the job path as $3."""
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\nREADY=\"${3%.json}.ready\"\n" + script)
    fake_python.chmod(0o755)
    monkeypatch.setattr(batch_executor.sys, "executable", str(fake_python))
    return tmp_path / "job.json"


def test_the_time_limit_starts_once_the_problem_process_is_ready(tmp_path: Path, monkeypatch):
    """Imports on a loaded machine took more than a 20 s limit on CI: they are not the problem's time."""
    job = _fake_child(tmp_path, monkeypatch, "sleep 3\ntouch \"$READY\"\nsleep 1\n")
    assert batch_executor._run_child(job, dict(os.environ), 2) == (None, "")
    assert not job.with_suffix(".ready").exists()  # a rerun of the job starts its clock afresh


def test_a_ready_problem_process_past_its_limit_is_killed(tmp_path: Path, monkeypatch):
    job = _fake_child(tmp_path, monkeypatch, "touch \"$READY\"\nsleep 60\n")
    started = time.monotonic()
    assert batch_executor._run_child(job, dict(os.environ), 1) == ("timeout", "exceeded the per-problem time limit of 1 s")
    assert time.monotonic() - started < 10


def test_a_problem_process_that_never_gets_ready_is_killed(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(batch_executor, "STARTUP_ALLOWANCE", 1.0)
    job = _fake_child(tmp_path, monkeypatch, "sleep 60\n")
    assert batch_executor._run_child(job, dict(os.environ), 600) == ("timeout", "the problem process did not start within 1 s")


# ---------------------------------------------------------------- the job a problem process is given

@pytest.mark.parametrize("device", ["cuda", "xpu", "cpu", "auto"])
def test_the_requested_device_reaches_the_problem_process(tmp_path: Path, monkeypatch, device: str):
    """`batch --device cuda` must run each problem on cuda (its worker's one visible GPU), not `auto`."""
    seen: dict[str, ProblemJob] = {}

    def fake_child(job_path: Path, env: dict[str, str], limit: float) -> tuple[str | None, str]:
        seen["job"] = ProblemJob.model_validate_json(job_path.read_text())
        return "crashed", "stub"

    monkeypatch.setattr(batch_executor, "_run_child", fake_child)
    problem = ProblemFile(id=1, name="1_Scale_Shift", path=str(PROBLEMS / "1_Scale_Shift.py"))
    request = BatchRequest(problems_dir=str(PROBLEMS), out=str(tmp_path), compile=True,
                           run=RunRequest(device=device, target="nvidia-sm90", trials=2, stages="dtype"))
    batch._solve(problem, request, SEEDS, tmp_path, {})
    run = seen["job"].run
    assert (run.device, run.target, run.trials, run.stages) == (device, "nvidia-sm90", 2, "dtype")
    assert run.reference == problem.path and run.kernel.endswith("kernel.py") and run.run_dir == tmp_path / "runs"
    assert seen["job"].compile
