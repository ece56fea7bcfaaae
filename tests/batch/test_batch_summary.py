"""Batch figures from hand-made results: fast_p over all problems, geomeans over correct ones, reports.

The CPU runs in test_batch_runs.py never measure speed, so the measured branch is checked here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from xe_forge.batch.report import geomean, render_markdown, summarize, write_batch_report


def _timed(speedup: float, compile_speedup: float | None = None) -> dict:
    timings = {"eager": {"speedup": speedup}}
    if compile_speedup is not None:
        timings["torch.compile"] = {"speedup": compile_speedup}
    return timings


@pytest.fixture
def measured() -> list[dict]:
    return [
        {"id": 1, "name": "1_A", "status": "improved", "correct": True, "worker": 0, "attempts": 1,
         "timings": _timed(2.5, 1.2) | {"input kernel": {"speedup": 2.0}}, "seed_timings": _timed(1.25)},
        {"id": 2, "name": "2_B", "status": "no improvement", "correct": True, "worker": 1, "attempts": 1,
         "timings": _timed(0.9), "degenerate": ["output is matched by zeros"]},
        {"id": 3, "name": "3_C", "status": "improved", "correct": True, "worker": 0, "attempts": 2,
         "timings": _timed(1.2)},
        {"id": 4, "name": "4_D", "status": "failed", "reason": "the input kernel fails", "worker": 1, "attempts": 1},
        {"id": 5, "name": "5_E", "status": "skipped", "reason": "no seed kernel", "worker": 0, "attempts": 1},
    ]


def test_fast_p_counts_every_problem_in_the_denominator(measured: list[dict]):
    s = summarize(measured, wall_seconds=360.0, workers=2)
    assert s["problems"] == 5 and s["correct"] == 3 and s["correctness_rate"] == pytest.approx(0.6)
    assert s["speed_measured"] is True
    # #2 is correct (fast_0) but degenerate: its 0.9x does not count toward fast_0.8 by default
    assert s["fast_p"] == pytest.approx({"0": 0.6, "0.8": 0.4, "1": 0.4, "1.5": 0.2, "2": 0.2})


def test_a_speedup_on_a_degenerate_problem_counts_in_fast_p_only_when_asked(measured: list[dict]):
    measured[1]["timings"] = _timed(9.0)  # a degenerate problem "won" big
    default = summarize(measured)
    assert default["fast_p"]["2"] == pytest.approx(0.2) and default["degenerate_in_fast_p"] is False
    counted = summarize(measured, count_degenerate=True)
    assert counted["fast_p"]["2"] == pytest.approx(0.4)
    assert "1 degenerate problem(s): their speedups not counted above p=0" in render_markdown(default)
    assert "counted (--count-degenerate)" in render_markdown(counted)


def test_geomeans_are_over_correct_measured_problems(measured: list[dict]):
    s = summarize(measured)
    assert s["geomean_speedup_vs_eager"] == pytest.approx((2.5 * 0.9 * 1.2) ** (1 / 3))
    assert s["geomean_speedup_vs_compile"] == pytest.approx(1.2)
    assert s["geomean_speedup_vs_seed"] == pytest.approx(2.0)  # the run's own timing of output vs seed


def test_bookkeeping_figures(measured: list[dict]):
    s = summarize(measured, wall_seconds=360.0, workers=2)
    assert s["degenerate"] == {"2_B": ["output is matched by zeros"]}
    assert s["workers"] == 2 and s["workers_used"] == [0, 1]
    assert s["problems_per_hour"] == pytest.approx(50.0)  # 5 finished in 6 minutes
    rows = {r["id"]: r for r in s["per_problem"]}
    assert rows[4]["status"] == "failed" and rows[4]["reason"] == "the input kernel fails" and not rows[4]["correct"]
    assert rows[1]["speedup_vs_eager"] == 2.5 and rows[1]["speedup_vs_compile"] == 1.2
    assert rows[3]["attempts"] == 2


def test_cpu_results_report_only_fast_0():
    results = [{"id": 1, "name": "1_A", "status": "no improvement", "correct": True},
               {"id": 2, "name": "2_B", "status": "failed", "correct": False}]
    s = summarize(results)
    assert s["fast_p"]["0"] == s["correctness_rate"] == 0.5
    assert all("not measured" in s["fast_p"][p] for p in ("0.8", "1", "1.5", "2"))
    assert s["geomean_speedup_vs_eager"] is None and s["speed_measured"] is False
    assert s["problems_per_hour"] is None  # no wall time given


def test_empty_batch_has_zero_rates():
    s = summarize([])
    assert s["problems"] == 0 and s["correctness_rate"] == 0.0 and s["fast_p"]["0"] == 0.0


def test_geomean_ignores_missing_and_non_positive_values():
    assert geomean([]) is None and geomean([0.0]) is None
    assert geomean([4.0, None, 1.0, 0.0]) == pytest.approx(2.0)  # type: ignore[list-item]
    assert math.isclose(geomean([3.0]), 3.0)


def test_reports_with_measured_speed_carry_the_chart(measured: list[dict], tmp_path: Path):
    s = summarize(measured, wall_seconds=60.0, workers=2)
    write_batch_report(tmp_path, s, measured)
    assert json.loads((tmp_path / "summary.json").read_text())["fast_p"]["1"] == pytest.approx(0.4)
    md = (tmp_path / "summary.md").read_text()
    assert md == render_markdown(s)
    assert "| 4 | 4_D | - | failed | no |" in md and "output is matched by zeros" in md
    html = (tmp_path / "report.html").read_text()
    assert '<img alt="speedups" src="data:image/png;base64,' in html and "4_D" in html
