"""The README's first command as a user runs it (relative paths, default run dir, -o), then what a
user does with the run: read its reports and distill its verified wins into draft KB entries."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.kb import validate_paths

EXAMPLE = Path(__file__).parents[1] / "examples" / "12_Gemm_Multiply_LeakyReLU"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    home = tmp_path_factory.mktemp("user")
    shutil.copytree(EXAMPLE, home / "ex")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(home)
        for name in [n for n in os.environ if n.startswith("XE_FORGE_")]:
            mp.delenv(name)
        mp.setenv("XE_FORGE_DEVICE", "cpu")  # the README's command, on the CPU even where a GPU is present
        result = CliRunner().invoke(app, ["optimize", "ex/kernel.py", "-o", "optimized.py"])
    runs = list((home / "runs").iterdir())
    return home, result, runs


def test_optimize_example_with_relative_paths_writes_the_output(run):
    home, result, runs = run
    assert result.exit_code == 0, result.output
    assert "verified correct, speed not measured" in result.output
    assert "1.000x" not in result.output and "best so far: verified correct, speed not measured" in result.output
    out = (home / "optimized.py").read_text()
    assert "@triton.autotune" in out and out != (home / "ex" / "kernel.py").read_text()
    assert len(runs) == 1 and (runs[0] / "output.py").read_text() == out


def test_reports_say_speed_is_not_measured_on_the_cpu(run):
    _, _, runs = run
    report = json.loads((runs[0] / "report.json").read_text())
    assert report["device"] == "cpu" and report["speed"].startswith("not measured") and report["speedup"] is None
    assert report["status"] == report["headline"] == "verified correct, speed not measured"  # said once
    assert [s["stage"] for s in report["stages"] if s["improved"]] == ["dtype", "fusion", "persistent"]
    assert all(s["speedup"] is None and not s["speed_verified"] for s in report["stages"])  # no number unmeasured
    accepted = [c for s in report["stages"] for c in s["candidates"] if c["accepted"]]
    assert accepted and all(c["seconds"] > 0 for c in accepted)  # where the run's time went
    assert [s["check"] for s in report["not_checked"]] == ["speed"]
    md = (runs[0] / "report.md").read_text()
    assert "## Not checked" in md and "**speed not measured**" in md
    unseen_rows = [line for line in md.splitlines() if line.startswith("| unseen ")]
    assert len(unseen_rows) >= 2 and all("| yes | pass | 1/1 |" in row for row in unseen_rows), unseen_rows
    assert all("BATCH=" in row for row in unseen_rows)  # the user sees the sizes each unseen shape had
    assert (runs[0] / "report.html").read_text().startswith("<!doctype html>")


def test_distill_turns_accepted_candidates_into_valid_draft_patterns(run, tmp_path):
    home, _, runs = run
    draft = tmp_path / "draft.yaml"
    result = CliRunner().invoke(app, ["kb", "distill", runs[0].name, "--run-dir", str(home / "runs"),
                                      "-o", str(draft)])
    assert result.exit_code == 0, result.output
    entries = yaml.safe_load(draft.read_text())["entries"]
    assert [e["stages"][0] for e in entries] == ["dtype", "fusion", "persistent"]
    for entry in entries:
        assert entry["kind"] == "pattern" and entry["confidence"] == "low"  # CPU: speed unverified
        assert entry["pattern"]["before"] != entry["pattern"]["after"]
        assert "speed unverified" in entry["summary"] and entry["targets"] == ["intel-xe2"]
    assert "tl.float32" in entries[0]["pattern"]["before"]  # the dtype win removed the upcast
    assert validate_paths([draft], import_check=False) == []


def test_distill_of_an_unknown_run_is_bad_input(tmp_path):
    result = CliRunner().invoke(app, ["kb", "distill", "nope", "--run-dir", str(tmp_path)])
    assert result.exit_code == 2 and "not an xe-forge run directory" in result.output


def test_resume_by_run_id_alone_reports_a_finished_run(run):
    home, _, runs = run
    result = CliRunner().invoke(app, ["optimize", "--resume", runs[0].name, "--run-dir", str(home / "runs")])
    assert result.exit_code == 0, result.output
    assert "already finished" in result.output and "verified correct, speed not measured" in result.output


def test_optimize_without_kernel_or_resume_is_bad_input():
    result = CliRunner().invoke(app, ["optimize"])
    assert result.exit_code == 2 and "--resume RUN_ID" in result.output


def test_the_run_directory_setting_is_where_runs_are_found(run, tmp_path, monkeypatch):
    """XE_FORGE_RUN_DIR stands in for --run-dir: resume and distill find the run without the flag."""
    home, _, runs = run
    monkeypatch.setenv("XE_FORGE_RUN_DIR", str(home / "runs"))
    monkeypatch.chdir(tmp_path)
    resumed = CliRunner().invoke(app, ["optimize", "--resume", runs[0].name])
    assert resumed.exit_code == 0 and "already finished" in resumed.output, resumed.output
    distilled = CliRunner().invoke(app, ["kb", "distill", runs[0].name, "-o", str(tmp_path / "d.yaml")])
    assert distilled.exit_code == 0 and (tmp_path / "d.yaml").is_file(), distilled.output
