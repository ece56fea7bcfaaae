"""Every printed ratio names both sides as timed, read where the user reads it: the console summary,
report.json, report.md and report.html of a real run through the graph.

No GPU here: the evaluator is the real one on the CPU (every check runs), and where a GPU would time it
answers with hand-made timings, a different figure per baseline, so a label that names the wrong side
shows as the wrong number. A changed run times output vs input, eager and torch.compile; an unchanged
one says "unchanged" and times the input against eager and torch.compile only, labelled so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.models import Timing, Verdict

from .helpers import KERNEL

# (kernel ms, baseline ms) per baseline key: each ratio is unmistakable
FIGURES = {"input kernel": (1.0, 2.0), "eager": (1.0, 0.5), "torch.compile": (1.0, 0.25)}
UNCHANGED_FIGURES = {"eager": (5.04, 2.65), "torch.compile": (5.04, 1.26)}


def _timing(kernel_ms: float, baseline_ms: float) -> Timing:
    speedup = baseline_ms / kernel_ms
    return Timing(candidate_ms=kernel_ms, baseline_ms=baseline_ms, speedup=speedup, spread=0.013, margin=0.02,
                  faster=speedup > 1.02, reps=40, candidate_spread_ms=0.01, baseline_spread_ms=0.02)


class GpuShapedEvaluator(Evaluator):
    """The CPU evaluator, with the timings a GPU run would add (candidates vs their baseline as given)."""

    measures_speed = True  # type: ignore[assignment]
    candidates_faster = True
    calls: list[dict] = []

    def evaluate(self, source, problem, *, time_it=None, baseline_source=None, compile_baseline=False, versus=(),
                 **kw):
        type(self).calls.append({"name": kw.get("name"), "time_it": time_it, "baseline": baseline_source is not None,
                                 "compile": compile_baseline, "versus": [v.label for v in versus]})
        verdict: Verdict = super().evaluate(source, problem, time_it=False, **kw)
        if not verdict.passed or time_it is False:
            return verdict
        figures = FIGURES if self.candidates_faster else {"input kernel": (1.0, 0.9), **UNCHANGED_FIGURES}
        keys = ["input kernel"] if baseline_source is not None else ["eager"]
        keys += ["torch.compile"] if compile_baseline else []
        keys += [v.label for v in versus if v.label not in keys]
        verdict.timings = {k: _timing(*figures[k]) for k in keys}
        verdict.timing = verdict.timings[keys[0]]
        verdict.speed_measured = True
        return verdict


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, faster: bool) -> tuple[str, dict, str, str]:
    monkeypatch.setattr("xe_forge.pipeline.run.Evaluator", GpuShapedEvaluator)
    monkeypatch.setattr(GpuShapedEvaluator, "candidates_faster", faster)
    monkeypatch.setattr(GpuShapedEvaluator, "calls", [])
    result = CliRunner().invoke(app, ["optimize", str(KERNEL), "--device", "cpu", "--engine", "rules",
                                      "--stages", "autotuning", "--run-dir", str(tmp_path / "runs"), "--trials", "1"])
    run_dir = next((tmp_path / "runs").iterdir())
    return (result.output, json.loads((run_dir / "report.json").read_text()), (run_dir / "report.md").read_text(),
            (run_dir / "report.html").read_text())


@pytest.mark.slow
def test_a_changed_run_names_output_and_each_baseline_with_its_own_figures(tmp_path, monkeypatch):
    console, report, md, html = _run(tmp_path, monkeypatch, faster=True)
    assert report["status"] == "improved" and not report["unchanged"], console
    labels = {f"{r['subject']} vs {r['baseline']}": r["timing"]["speedup"] for r in report["ratios"]}
    assert labels == {"output vs input kernel": 2.0, "output vs eager": 0.5, "output vs torch.compile": 0.25}
    assert report["speedup"] == 2.0 and set(report["timings"]) == set(FIGURES)
    assert {r["label"] for r in report["ratios"]} == set(expected := {
        "output vs input kernel": "2.000x", "output vs eager PyTorch": "0.500x",
        "output vs torch.compile (default)": "0.250x"})  # report.json carries the printed label
    for text in (console, md):  # one process's figures, and the command that re-times them in fresh ones
        assert "figures from one process; `xe-forge bench --repeat 5 " in text
    for label, figure in expected.items():
        for text, where in ((console, "console"), (md, "report.md"), (html, "report.html")):
            assert label in text and figure in text, f"{label} {figure} missing from the {where}"
    # both sides in ms, the repetition spread, and which timed run each figure came from
    line = next(x for x in console.splitlines() if "output vs eager PyTorch" in x)
    assert "output 1.0000 ms" in line and "eager PyTorch 0.5000 ms" in line and "±1.3%" in line
    assert "timed in the final check" in line  # every ratio from the one timing run of the final check
    assert "timed in the final check" in next(x for x in md.splitlines() if "output vs input kernel" in x)
    assert "vs input (margin" not in console + md  # the old label, which named the wrong side when unchanged


@pytest.mark.slow
def test_an_unchanged_run_says_so_and_times_the_input_against_pytorch_labelled_so(tmp_path, monkeypatch):
    console, report, md, html = _run(tmp_path, monkeypatch, faster=False)
    assert report["status"] == "no improvement" and report["unchanged"], console
    assert report["headline"].startswith("no improvement: unchanged, the output is the input")
    assert report["speedup"] is None and "input kernel" not in report["timings"]
    assert [(r["subject"], r["baseline"]) for r in report["ratios"]] == [("input", "eager"), ("input", "torch.compile")]
    for text in (console, md, html):
        assert "unchanged" in text
        assert "input kernel (unchanged) vs eager PyTorch" in text and "0.526x" in text  # 2.65 / 5.04
        assert "input kernel (unchanged) vs torch.compile (default)" in text
        assert not re.search(r"\boutput vs (input kernel|eager|torch)", text), "no output figure: nothing changed"
    # the final check did not time the input against itself: its one run timed it against eager and compile
    final = [c for c in GpuShapedEvaluator.calls if c["name"] == "final"]
    assert len(final) == 1 and final[0]["time_it"] and not final[0]["baseline"]
    assert final[0]["versus"] == ["torch.compile"]  # eager comes first by itself


@pytest.mark.slow
def test_the_report_header_names_the_toolchain_installed_here(tmp_path, monkeypatch):
    from importlib.metadata import version

    _, report, md, html = _run(tmp_path, monkeypatch, faster=True)
    installed = f"triton {version('triton')}"
    assert report["device_toolchain"] == installed
    header = next(x for x in md.splitlines() if x.startswith("- ran on:"))
    assert f"cpu: the interpreter of {installed}" in header and "preparing for target intel-xe2" in header
    assert f"the interpreter of {installed}" in html
