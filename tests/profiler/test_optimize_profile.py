"""`xe-forge optimize --profile` on a machine without counters: the run is the same run, and its
report says why no profile was read (here: the CPU)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.pipeline.status import CORRECT_UNTIMED

from .conftest import EXAMPLE


@pytest.mark.slow  # one optimize run through the interpreter (~15 s on two shared cores)
def test_optimize_with_profile_on_the_cpu_degrades_to_unavailable(tmp_path):
    result = CliRunner().invoke(app, ["optimize", str(EXAMPLE / "kernel.py"), "--profile", "--stages", "dtype",
                                      "--max-iters", "1", "--run-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    [run] = list(tmp_path.iterdir())
    assert json.loads((run / "args.json").read_text())["profile"] is True  # a --resume keeps profiling
    report = json.loads((run / "report.json").read_text())
    assert report["status"] == CORRECT_UNTIMED  # the CPU never measures a gain
    labels = [e["label"] for e in report["profile"]["entries"]]
    assert labels == ["input", "output"]
    assert all("interpreter" in e["record"]["unavailable"] for e in report["profile"]["entries"])
    assert "## Profile" in (run / "report.md").read_text() and not (run / "roofline.png").exists()
