"""`xe-forge bench --repeat N`: the same timing in N fresh processes, and the spread across them, printed.

The CPU measures no speed, so the evaluator here runs the timing protocol through the interpreter
(`cpu_timing`, as tests/verify/test_timed.py does) and calls itself a timer: the figures are
meaningless, the plumbing (new workers per repetition, the table, the spread) is what is checked.
"""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.models import Timing
from xe_forge.verify.repeat import Repeated

from .helpers import FIXTURES

LINEAR = FIXTURES / "linear"


class TimingOnCpu(Evaluator):
    measures_speed = True  # type: ignore[assignment]
    runner_pids: list[int] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **{**kwargs, "cpu_timing": True})

    def evaluate(self, *args, **kwargs):
        verdict = super().evaluate(*args, **kwargs)
        type(self).runner_pids.append(self.runner.pid)
        return verdict


def test_the_spread_is_max_minus_min_over_the_median():
    rep = Repeated(baseline="eager", runs=[Timing(candidate_ms=1, baseline_ms=b, speedup=b, spread=0, margin=0.02,
                                                  faster=True, reps=10) for b in (1.0, 1.1, 1.2)])
    assert rep.median == pytest.approx(1.1) and rep.spread == pytest.approx(0.2 / 1.1)


@pytest.mark.slow
def test_bench_repeat_times_in_fresh_processes_and_prints_the_spread(monkeypatch):
    monkeypatch.setattr("xe_forge.cli.bench.Evaluator", TimingOnCpu)
    monkeypatch.setattr(TimingOnCpu, "runner_pids", [])
    result = CliRunner().invoke(app, ["bench", str(LINEAR / "good.py"), "--reference", str(LINEAR / "ref_pytorch.py"),
                                      "--spec", str(LINEAR / "spec.yaml"), "--device", "cpu", "--repeat", "3"])
    assert result.exit_code == 0, result.output
    pids = TimingOnCpu.runner_pids
    assert len(pids) == 3 and len(set(pids)) == 3, "each repetition in a new worker process"
    assert "kernel vs eager PyTorch" in result.output and "the same timing in 3 fresh processes" in result.output
    row = next(x for x in result.output.splitlines() if x.strip("│ ").startswith("eager PyTorch"))
    assert len(re.findall(r"\d+\.\d{3}x", row)) == 4 and "%" in row  # three runs, the median, the spread


def test_bench_on_the_cpu_still_says_it_cannot_time():
    result = CliRunner().invoke(app, ["bench", str(LINEAR / "good.py"), "--reference", str(LINEAR / "ref_pytorch.py"),
                                      "--spec", str(LINEAR / "spec.yaml"), "--device", "cpu", "--repeat", "2"])
    assert result.exit_code == 3 and "cannot" in result.output

