"""`xe-forge batch` exit codes: 0 when a problem is correct, 1 when none is, 2 for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app

from .conftest import PROBLEMS, SEEDS

FAST = ["--seeds", str(SEEDS), "--device", "cpu", "--variant", "ci", "--stages", "dtype", "--max-iters", "1"]


def _batch(*args: str) -> object:
    return CliRunner().invoke(app, ["batch", *args])


@pytest.mark.parametrize(("args", "message"), [
    (["missing-dir"], "problems directory not found"),
    ([str(PROBLEMS), "--only", "99"], "matching --only"),
    ([str(PROBLEMS), "--only", "1-x"], "--only: '1-x'"),
])
def test_bad_input_exits_2_without_a_traceback(offline_env, tmp_path: Path, args: list[str], message: str):
    result = _batch(*args, "--out", str(tmp_path / "out"), *FAST)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_no_correct_problem_exits_1(offline_env, tmp_path: Path):
    result = _batch(str(PROBLEMS), "--only", "5", "--out", str(tmp_path / "out"), *FAST)
    assert result.exit_code == 1, result.output
    assert "5_Square_NoSeed" in result.output and (tmp_path / "out" / "summary.md").is_file()


def test_a_correct_problem_exits_0_and_exports(offline_env, tmp_path: Path):
    traj = tmp_path / "traj.jsonl"
    result = _batch(str(PROBLEMS), "--only", "1", "--out", str(tmp_path / "out"), "--json",
                    "--export-trajectories", str(traj), *FAST)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["correct"] == 1 and summary["per_problem"][0]["status"] == "verified correct, speed not measured"
    assert [json.loads(line)["stage"] for line in traj.read_text().splitlines()] == ["dtype"]
