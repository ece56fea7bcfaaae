"""The README's first command, as a user runs it: relative paths, default run directory, -o."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from xe_forge.cli import app

EXAMPLE = Path(__file__).parents[1] / "examples" / "12_Gemm_Multiply_LeakyReLU"


def test_optimize_example_with_relative_paths_writes_the_output(tmp_path, monkeypatch):
    shutil.copytree(EXAMPLE, tmp_path / "ex")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["optimize", "ex/kernel.py", "-o", "optimized.py"])
    assert result.exit_code == 0, result.output
    assert "improved (speed unverified)" in result.output
    out = (tmp_path / "optimized.py").read_text()
    assert "@triton.autotune" in out and out != (tmp_path / "ex" / "kernel.py").read_text()
    runs = list((tmp_path / "runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "report.md").is_file() and (runs[0] / "output.py").read_text() == out
