"""Fixtures for tests/profiler: recorded profiler outputs and a fake profiler executable on PATH."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem

HERE = Path(__file__).parent
RECORDED = HERE / "recorded"
EXAMPLE = HERE.parents[1] / "examples" / "12_Gemm_Multiply_LeakyReLU"


@pytest.fixture
def gemm_problem():
    return load_problem(EXAMPLE / "kernel.py", variant="bench-gpu")


class FakeProfiler:
    """Installs `ncu` and `vtune` executables that replay recorded outputs, and reads what they saw."""

    def __init__(self, root: Path) -> None:
        self.bin = root / "bin"
        self.bin.mkdir()
        self.plan = root / "plan.json"
        self.calls_file = root / "calls.jsonl"
        for name in ("ncu", "vtune"):
            exe = self.bin / name
            exe.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.path.insert(0, {str(HERE)!r})\n"
                           f"runpy.run_path({str(HERE / 'fake_profiler.py')!r}, run_name='__main__')\n")
            exe.chmod(exe.stat().st_mode | stat.S_IEXEC)

    def steps(self, *steps: dict) -> None:
        def resolve(step: dict) -> dict:
            return {k: (str(RECORDED / v) if k in ("log", "stdout") else v) for k, v in step.items()}

        self.plan.write_text(json.dumps([resolve(s) for s in steps]))

    @property
    def calls(self) -> list[dict]:
        if not self.calls_file.is_file():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]


@pytest.fixture
def fake(tmp_path, monkeypatch):
    profiler = FakeProfiler(tmp_path)
    monkeypatch.setenv("PATH", f"{profiler.bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_PROFILER_PLAN", str(profiler.plan))
    monkeypatch.setenv("FAKE_PROFILER_CALLS", str(profiler.calls_file))
    return profiler
