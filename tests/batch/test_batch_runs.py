"""Real batches on the CPU over the fixture problems: one process per problem, Triton's interpreter.

The shared run (conftest.full_batch) solves problem 1 alone, then 1-3 and 5 with --resume and two
workers; these tests read its figures, files and store. The time limit, a batch left 'running' and
Ctrl-C each get a short run of their own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from xe_forge.batch.report import export_trajectories, render_markdown
from xe_forge.batch.runner import run_batch

from .conftest import PROBLEMS, SEEDS

NO_SEED = "no seed kernel, and no LLM configured"


def _rows(summary: dict) -> dict[int, dict]:
    return {row["id"]: row for row in summary["per_problem"]}


def _store_rows(out: Path) -> dict[int, dict]:
    with sqlite3.connect(out / "batch.sqlite") as conn:
        conn.row_factory = sqlite3.Row
        return {r["id"]: dict(r) for r in conn.execute("SELECT * FROM problems")}


# ---------------------------------------------------------------- the shared run's figures

def test_summary_figures(full_batch: dict):
    s = full_batch["second"]
    assert (s["problems"], s["correct"]) == (4, 1)  # 2 has a constant reference: it cannot be verified
    assert s["correctness_rate"] == s["fast_p"]["0"] == 0.25
    assert set(s["fast_p"]) == {"0", "0.8", "1", "1.5", "2"}
    assert all(s["fast_p"][p] == "not measured (CPU)" for p in ("0.8", "1", "1.5", "2"))
    assert s["speed_measured"] is False and s["geomean_speedup_vs_eager"] is None


def test_per_problem_statuses_and_reasons(full_batch: dict):
    rows = _rows(full_batch["second"])
    assert sorted(rows) == [1, 2, 3, 5]
    assert rows[1]["correct"] and rows[1]["status"] == "verified correct, speed not measured"  # fp64 -> fp32 accepted
    assert not rows[2]["correct"] and "cannot be verified" in rows[2]["reason"], rows[2]  # x - max(x), one column
    assert not rows[3]["correct"] and rows[3]["status"] in ("failed", "crashed")
    assert "SIGABRT" in rows[3]["reason"]
    assert rows[5]["status"] == "skipped" and rows[5]["reason"].startswith(NO_SEED) and not rows[5]["correct"]


def test_degenerate_problem_is_flagged(full_batch: dict):
    s = full_batch["second"]
    assert list(s["degenerate"]) == ["2_RowMax_Subtract"]
    assert {"output is constant", "output is matched by zeros"} <= set(s["degenerate"]["2_RowMax_Subtract"])
    assert _rows(s)[2]["degenerate"] == s["degenerate"]["2_RowMax_Subtract"] and not _rows(s)[1]["degenerate"]


def test_report_files_are_written(full_batch: dict):
    out, s = full_batch["out"], full_batch["second"]
    saved = json.loads((out / "summary.json").read_text())
    assert saved["per_problem"] == json.loads(json.dumps(s["per_problem"]))
    assert saved["fast_p"] == s["fast_p"]
    md = (out / "summary.md").read_text()
    assert md == render_markdown(s)
    assert "| 5 | 5_Square_NoSeed | - | skipped | no |" in md and "output is matched by zeros" in md
    html = (out / "report.html").read_text()
    assert "Speed not measured (CPU run)" in html and "2_RowMax_Subtract" in html
    for pid in (1, 2):  # every problem whose seed passed its baseline got a full pipeline run
        assert len(list((out / "runs").glob(f"p{pid:03d}-*/report.json"))) == 1


def test_resume_did_not_rerun_the_first_set(full_batch: dict):
    first, second = full_batch["first"], full_batch["second"]
    assert first["problems"] == 1 and first["correct"] == 1 and first["workers_used"] == [0]
    assert _rows(second)[1] == _rows(first)[1]  # same row: not run again
    stored = _store_rows(full_batch["out"])
    assert stored[1]["started"] < full_batch["between"] < min(stored[i]["started"] for i in (2, 3, 5))


def test_two_workers_used_and_no_problem_twice(full_batch: dict):
    s = full_batch["second"]
    assert s["workers"] == 2 and s["workers_used"] == [0, 1]
    rows = _rows(s)
    assert {rows[i]["worker"] for i in (2, 3, 5)} == {0, 1}  # both workers took problems in the resumed run
    assert all(r["attempts"] == 1 for r in s["per_problem"])


def test_export_trajectories_writes_one_object_per_candidate(full_batch: dict, tmp_path: Path):
    target = tmp_path / "traj.jsonl"
    n = export_trajectories(full_batch["out"], target)
    lines = target.read_text().splitlines()
    assert n == len(lines) >= 1
    records = [json.loads(line) for line in lines]
    for rec in records:
        assert {"stage", "prompt_hash", "code", "verdict", "passed", "accepted", "problem_run"} <= set(rec)
        assert isinstance(rec["verdict"], dict) and "passed" in rec["verdict"] and rec["code"].strip()
    fp32 = [r for r in records if r["problem_run"].startswith("p001-") and r["recipe"] == "fp64-to-fp32"]
    assert fp32 and fp32[0]["stage"] == "dtype" and fp32[0]["passed"] and "tl.float64" not in fp32[0]["code"]
    assert fp32[0]["prompt_hash"] is None  # a rules candidate: no prompt behind it


# ---------------------------------------------------------------- runs of their own

def test_resume_reruns_a_problem_left_running(full_batch: dict, options, tmp_path: Path):
    """A batch killed mid-problem leaves it 'running': --resume runs it again and only it."""
    out = tmp_path / "out"
    shutil.copytree(full_batch["out"], out)
    with sqlite3.connect(out / "batch.sqlite") as conn:
        conn.execute("UPDATE problems SET status='running', result=NULL WHERE id IN (1, 5)")
    for pid in (1, 5):  # killed mid-problem: its process never wrote a result
        next((out / "jobs").glob(f"p{pid:03d}-*.result.json")).unlink()
    s = run_batch(options(out, only="1-3,5", workers=1, resume=True))
    rows = _rows(s)
    assert {i: rows[i]["attempts"] for i in rows} == {1: 2, 2: 1, 3: 1, 5: 2}
    assert rows[1]["correct"] and rows[1]["status"] == "verified correct, speed not measured"  # its finished run resumed
    assert rows[5]["status"] == "skipped" and s["correct"] == 1  # 2 cannot be verified


def test_resume_keeps_a_problem_that_finished_just_before_the_batch_stopped(full_batch: dict, options,
                                                                            tmp_path: Path):
    """Stopped between the problem process writing its result and the batch recording it: not run again."""
    out = tmp_path / "out"
    shutil.copytree(full_batch["out"], out)
    with sqlite3.connect(out / "batch.sqlite") as conn:
        conn.execute("UPDATE problems SET status='running', result=NULL WHERE id=1")
    s = run_batch(options(out, only="1-3,5", workers=1, resume=True))
    row = _rows(s)[1]
    assert row["attempts"] == 1 and row["correct"] and row["status"] == "verified correct, speed not measured"


def _processes_with(marker: str) -> list[int]:
    """Live processes (other than this one) whose environment carries `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture
def marker(monkeypatch: pytest.MonkeyPatch) -> str:
    """An environment entry every process of this test's batch inherits, to find leftovers by."""
    value = f"XEF_BATCH_TEST={uuid.uuid4().hex}"
    monkeypatch.setenv("XEF_BATCH_TEST", value.split("=")[1])
    return value


@pytest.mark.slow  # waits out a 45 s time limit
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc to look for leftover processes")
def test_time_limit_kills_a_hanging_problem_and_the_batch_goes_on(offline_env, options, marker, tmp_path):
    started = time.monotonic()
    # the limit must hold problem 5's whole quick path after its imports: two evaluation workers starting and
    # importing torch, which took more than 20 s on a loaded CI machine
    s = run_batch(options(tmp_path / "out", only="4,5", workers=1, time_limit=45))
    rows = _rows(s)
    assert rows[4]["status"] == "timeout" and rows[4]["reason"] == "exceeded the per-problem time limit of 45 s"
    assert rows[5]["status"] == "skipped"  # run after the hang, by the same worker
    assert time.monotonic() - started < 200  # 45 s of hang, the rest imports on a loaded machine
    time.sleep(0.5)
    assert _processes_with(marker) == []  # the seed's evaluation worker went down with its problem process


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc to look for leftover processes")
def test_interrupting_the_batch_ends_its_problem_processes(offline_env, marker, tmp_path: Path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "xe_forge", "batch", str(PROBLEMS), "--seeds", str(SEEDS), "--only", "4",
           "--out", str(out), "--device", "cpu", "--variant", "ci", "--stages", "dtype", "--max-iters", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while len(_processes_with(marker)) < 3 and time.monotonic() < deadline:  # batch, problem, eval worker
            time.sleep(0.5)
        assert len(_processes_with(marker)) >= 3, "the hanging problem never got to its evaluation worker"
        time.sleep(3)  # into the seed's sleep
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    time.sleep(0.5)
    assert _processes_with(marker) == []
    assert _store_rows(out)[4]["status"] == "running"  # so --resume runs it again
