"""run_batch's scheduling and bookkeeping with the problem process replaced by a stub (no torch, no spawn).

What is checked: every problem runs exactly once over several workers, all workers take work, --resume
skips finished problems and redoes ones left 'running', and a runner error on one problem is recorded
while the batch goes on. The same properties are checked on real problem processes in test_batch_runs.py.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from xe_forge.batch import runner as batch
from xe_forge.batch.models import BatchRequest, ProblemResult
from xe_forge.batch.runner import run_batch
from xe_forge.config import RunRequest
from xe_forge.errors import InputError


class StubSolver:
    """Stands in for batch._solve: records who solved what, sleeps a little, returns a canned result."""

    def __init__(self, delay: float = 0.05, fail: set[int] = frozenset(), raise_on: set[int] = frozenset()) -> None:
        self.delay, self.fail, self.raise_on = delay, fail, raise_on
        self.calls: list[tuple[int, dict[str, str]]] = []
        self.lock = threading.Lock()

    def __call__(self, problem, opts, seeds_dir, out, env, executor=None) -> ProblemResult:
        with self.lock:
            self.calls.append((problem.id, env))
        time.sleep(self.delay)
        if problem.id in self.raise_on:
            raise RuntimeError("job file could not be written")
        if problem.id in self.fail:
            return ProblemResult.failed(problem, None, "crashed", "problem process exited with -6: ")
        return ProblemResult(problem_id=problem.id, name=problem.name, status="no improvement", correct=True)

    @property
    def ids(self) -> list[int]:
        return sorted(i for i, _ in self.calls)


@pytest.fixture
def problems_dir(tmp_path: Path) -> Path:
    d = tmp_path / "level2"
    d.mkdir()
    for i in range(1, 11):
        (d / f"{i}_Op{i}.py").write_text("# never imported: the solver is stubbed\n")
    return d


def _opts(problems_dir: Path, out: Path, **kw) -> BatchRequest:
    return BatchRequest(problems_dir=str(problems_dir), out=str(out), run=RunRequest(device="cpu"), **kw)


def _set_status(out: Path, pid: int, status: str) -> None:
    with sqlite3.connect(out / "batch.sqlite") as conn:
        conn.execute("UPDATE problems SET status=? WHERE id=?", (status, pid))


def test_each_problem_runs_once_and_every_worker_takes_work(problems_dir, tmp_path, monkeypatch):
    solver = StubSolver(delay=0.1)
    monkeypatch.setattr(batch, "_solve", solver)
    s = run_batch(_opts(problems_dir, tmp_path / "out", workers=3))
    assert solver.ids == list(range(1, 11))
    assert s["problems"] == 10 and s["correct"] == 10 and s["workers"] == 3 and s["workers_used"] == [0, 1, 2]
    assert all(r["attempts"] == 1 for r in s["per_problem"])
    assert all(env["PYTHONUNBUFFERED"] == "1" for _, env in solver.calls)


def test_resume_skips_finished_problems_and_redoes_running_ones(problems_dir, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(batch, "_solve", StubSolver(fail={4}))
    run_batch(_opts(problems_dir, out, only="1-5", workers=2))
    _set_status(out, 2, "running")  # what a batch killed while solving problem 2 leaves behind
    again = StubSolver()
    monkeypatch.setattr(batch, "_solve", again)
    s = run_batch(_opts(problems_dir, out, resume=True, workers=2))
    assert again.ids == [2, 6, 7, 8, 9, 10]  # crashed problem 4 is finished too: not retried
    attempts = {r["id"]: r["attempts"] for r in s["per_problem"]}
    assert attempts == {i: 2 if i == 2 else 1 for i in range(1, 11)}
    assert {r["id"]: r["status"] for r in s["per_problem"]}[4] == "crashed"
    assert s["problems"] == 10 and s["correct"] == 9
    assert s["problems_per_hour"] * s["wall_seconds"] / 3600 == pytest.approx(6)  # only this run's problems


def test_reusing_an_output_directory_without_resume_is_refused(problems_dir, tmp_path, monkeypatch):
    """Old per-problem runs would otherwise be silently continued: the user must say --resume."""
    out = tmp_path / "out"
    monkeypatch.setattr(batch, "_solve", StubSolver(delay=0))
    run_batch(_opts(problems_dir, out, only="1-3"))
    solver = StubSolver(delay=0)
    monkeypatch.setattr(batch, "_solve", solver)
    with pytest.raises(InputError, match="already holds a batch"):
        run_batch(_opts(problems_dir, out, only="1-3"))
    assert solver.ids == []


def test_resume_with_nothing_left_runs_nothing(problems_dir, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(batch, "_solve", StubSolver(delay=0))
    run_batch(_opts(problems_dir, out, only="1-2"))
    solver = StubSolver(delay=0)
    monkeypatch.setattr(batch, "_solve", solver)
    s = run_batch(_opts(problems_dir, out, only="1-2", resume=True))
    assert solver.calls == [] and s["problems"] == 2 and s["correct"] == 2


def test_only_restricts_the_summary_to_the_selection(problems_dir, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(batch, "_solve", StubSolver(delay=0))
    run_batch(_opts(problems_dir, out))
    s = run_batch(_opts(problems_dir, out, only="3,5", resume=True))
    assert [r["id"] for r in s["per_problem"]] == [3, 5] and s["problems"] == 2


def test_a_runner_error_on_one_problem_is_recorded_and_the_batch_goes_on(problems_dir, tmp_path, monkeypatch):
    solver = StubSolver(raise_on={1, 2})
    monkeypatch.setattr(batch, "_solve", solver)
    s = run_batch(_opts(problems_dir, tmp_path / "out", workers=2))
    assert solver.ids == list(range(1, 11)) and s["problems"] == 10 and s["correct"] == 8
    row = {r["id"]: r for r in s["per_problem"]}[1]
    assert row["status"] == "failed" and row["reason"] == "batch runner error: RuntimeError: job file could not be written"


def test_progress_hears_about_every_problem(problems_dir, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(batch, "_solve", StubSolver(delay=0))
    run_batch(_opts(problems_dir, out, only="1-4"))
    events: list[tuple] = []

    class Recorder:
        def start(self, total, already, workers):
            events.append(("start", total, already, workers))

        def problem_started(self, problem, worker):
            events.append(("started", problem.id))

        def problem_done(self, problem, result):
            events.append(("done", problem.id, result.status))

    run_batch(_opts(problems_dir, out, resume=True), progress=Recorder())
    assert events[0] == ("start", 10, 4, 1)
    assert [e for e in events if e[0] == "done"] == [("done", i, "no improvement") for i in range(5, 11)]


def test_bad_input_creates_no_output_directory(tmp_path: Path):
    out = tmp_path / "out"
    with pytest.raises(batch.InputError):
        run_batch(_opts(tmp_path / "missing", out))
    assert not out.exists()


def test_gpu_workers_get_their_own_visible_device(problems_dir, tmp_path, monkeypatch):
    """Two workers against one GPU (the H200 case): both see device 0, each problem still runs once."""
    monkeypatch.setattr(batch, "device_slots", lambda device, workers: [{"CUDA_VISIBLE_DEVICES": "0"}] * 2)
    solver = StubSolver(delay=0.05)
    monkeypatch.setattr(batch, "_solve", solver)
    s = run_batch(_opts(problems_dir, tmp_path / "out", only="1-4", workers=2))
    assert solver.ids == [1, 2, 3, 4] and s["workers_used"] == [0, 1]
    assert {env["CUDA_VISIBLE_DEVICES"] for _, env in solver.calls} == {"0"}


class _EnvFailingSolver(StubSolver):
    """Problem 2 fails for an environment reason (exit code 3: the LLM endpoint was unreachable)."""

    def __call__(self, problem, opts, seeds_dir, out, env, executor=None) -> ProblemResult:
        result = super().__call__(problem, opts, seeds_dir, out, env)
        if problem.id == 2:
            return ProblemResult.failed(problem, None, "failed", "the LLM endpoint is unreachable", exit_code=3)
        if problem.id == 3:
            return ProblemResult.failed(problem, None, "failed", "the input kernel fails against its reference",
                                        exit_code=2)
        return result


def test_resume_retries_environment_failures_but_not_bad_input(problems_dir, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(batch, "_solve", _EnvFailingSolver(delay=0))
    run_batch(_opts(problems_dir, out, only="1-3"))
    solver = StubSolver(delay=0)
    monkeypatch.setattr(batch, "_solve", solver)
    s = run_batch(_opts(problems_dir, out, only="1-3", resume=True))
    assert solver.ids == [2]
    assert {r["id"]: r["status"] for r in s["per_problem"]} == {1: "no improvement", 2: "no improvement", 3: "failed"}
