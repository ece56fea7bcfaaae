"""The batch summary as a user reads it: no fast_p figure next to 'not measured', a workers line that
says how many ran problems, a not-checked column that is never empty while speed was not measured,
ratios named both sides, and a table that fits the terminal (summary.md keeps the Markdown)."""

from __future__ import annotations

import io

from rich.console import Console
from typer.testing import CliRunner

from xe_forge.batch.models import ProblemFile, ProblemResult
from xe_forge.batch.report import headline_lines, render_html, render_markdown, render_table, summarize
from xe_forge.batch.store import BatchStore
from xe_forge.cli.app import app
from xe_forge.pipeline.ratios import ratios_of
from xe_forge.verify.models import Timing

CPU = [{"id": 12, "name": "12_Gemm_Multiply_LeakyReLU", "status": "verified correct, speed not measured",
        "correct": True, "worker": 0, "attempts": 1, "run_id": "p012-x",
        "not_checked": ["speed not measured"]}]


def _gpu() -> list[dict]:
    t = {"speedup": 1.6}
    return [{"id": 1, "name": "1_A", "status": "improved", "correct": True, "worker": 0, "attempts": 1,
             "timings": {"eager": t, "torch.compile": {"speedup": 0.8}, "input kernel": {"speedup": 1.25}}},
            {"id": 2, "name": "2_B", "status": "no improvement", "correct": True, "worker": 1, "attempts": 1,
             "unchanged": True, "timings": {"eager": {"speedup": 0.52}}}]


def test_cpu_summary_prints_no_fast_p_figure_beside_not_measured():
    lines = headline_lines(summarize(CPU, wall_seconds=30, workers=1))
    fast = next(x for x in lines if x.startswith("fast_p"))
    assert "not measured" in fast and not any(f"p={p}" in fast for p in ("0.8", "1", "1.5", "2"))
    assert "p=0" not in fast and "correctness rate" in fast
    assert not any("--repeat" in x for x in lines)  # nothing timed, nothing to re-time
    assert "workers: 1 (it ran the problems)" in lines[-1] and "used: 0" not in " ".join(lines)


def test_the_not_checked_column_says_speed_was_not_measured():
    md = render_markdown(summarize(CPU, workers=1))
    (row,) = [x for x in md.splitlines() if x.startswith("| 12 ")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    header = [c.strip() for c in md.splitlines()[md.splitlines().index(next(x for x in md.splitlines()
                                                                            if x.startswith("| id")))].strip("|").split("|")]
    assert cells[header.index("not checked")] == "speed not measured"


def test_gpu_summary_names_both_sides_and_marks_an_unchanged_problem():
    s = summarize(_gpu(), wall_seconds=60, workers=2)
    lines, md = headline_lines(s), render_markdown(s)
    assert "fast_p (correct and output faster than eager PyTorch by more than p): p=0: 1.000, p=0.8: 0.500" in lines[1]
    assert any(x.startswith("geomean, output vs eager PyTorch") for x in lines)
    assert any(x.startswith("geomean, output vs its seed") and x.endswith("1.250x") for x in lines)
    assert "| vs eager PyTorch | vs torch.compile (default) | vs seed (its input kernel) |" in md
    assert "Ratios per problem: the output timed against each" in md
    (unchanged,) = [x for x in md.splitlines() if x.startswith("| 2 ")]
    assert "0.520x (input kernel (unchanged) vs eager PyTorch)" in unchanged
    (changed,) = [x for x in md.splitlines() if x.startswith("| 1 ")]
    assert "| 1.600x | 0.800x | 1.250x |" in changed
    assert "workers: 2 (all ran problems)" in lines[-1]
    assert any("xe-forge bench --repeat 5 runs/<run id>/output.py" in x for x in lines)  # one process's figures


def test_a_terminal_gets_a_table_within_its_width_and_summary_md_keeps_markdown(monkeypatch, tmp_path):
    summary = summarize(_gpu() + CPU, wall_seconds=60, workers=2)
    screen = Console(file=io.StringIO(), width=80, force_terminal=True, color_system=None)
    screen.print(render_table(summary))
    drawn = screen.file.getvalue().splitlines()
    assert drawn and max(len(x) for x in drawn) <= 80 and "12_Gemm" in screen.file.getvalue()
    monkeypatch.setattr("xe_forge.batch.runner.run_batch", lambda request, progress=None: summary)
    monkeypatch.setattr("xe_forge.cli.batch.console", screen)
    result = CliRunner().invoke(app, ["batch", str(tmp_path), "--device", "cpu", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    printed = screen.file.getvalue()
    assert "|---|" not in printed and "┃" in printed and max(len(x) for x in printed.splitlines()) <= 80


def _timing(speedup: float) -> Timing:
    return Timing(candidate_ms=1.0, baseline_ms=speedup, speedup=speedup, spread=0.01, margin=0.02,
                  faster=speedup > 1.02, reps=40)


def test_stored_results_print_each_ratio_as_the_run_labelled_it(tmp_path):
    """The problem process's result (the run's report.ratios), through batch.sqlite, into every output:
    an unchanged run's ratios name the input kernel, never 'output', in summary.json, .md, the page and
    the terminal table."""
    store = BatchStore(tmp_path / "batch.sqlite")
    for pid, subject, figures in ((1, "output", {"eager": 1.6, "torch.compile": 0.8, "input kernel": 1.25}),
                                  (2, "input", {"eager": 0.526, "torch.compile": 0.25})):
        problem = ProblemFile(id=pid, name=f"{pid}_P", path=str(tmp_path / f"{pid}_P.py"))
        store.start(problem, worker=0)
        ratios = ratios_of({k: _timing(v) for k, v in figures.items()}, subject, "final check")
        store.finish(pid, ProblemResult(problem_id=pid, name=problem.name, status="improved", correct=True,
                                        ratios=ratios, unchanged=subject == "input"))
    s = summarize(store.results(), workers=1)
    rows = {r["id"]: r for r in s["per_problem"]}
    assert rows[2]["ratios"]["eager"]["label"] == "input kernel (unchanged) vs eager PyTorch"
    assert rows[1]["ratios"]["input kernel"]["label"] == "output vs input kernel"
    assert rows[1]["speedup_vs_eager"] == 1.6 and s["geomean_speedup_vs_seed"] == 1.25
    md, html = render_markdown(s), render_html(tmp_path, s)
    for text in (md, html):
        assert "0.526x (input kernel (unchanged) vs eager PyTorch)" in text
        assert "0.250x (input kernel (unchanged) vs torch.compile (default))" in text
        assert "vs seed (its input kernel)" in text
    screen = Console(file=io.StringIO(), width=200, force_terminal=True, color_system=None)
    screen.print(render_table(s))
    (row,) = [x for x in screen.file.getvalue().splitlines() if "2_P" in x]
    assert "0.526x (input kernel (unchanged) vs eager PyTorch)" in row


def test_the_finished_line_names_the_timed_kernel_as_its_ratio_does():
    from xe_forge.pipeline.progress import BatchProgress

    screen = Console(file=io.StringIO(), width=200, force_terminal=False, color_system=None)
    progress = BatchProgress(screen)
    progress.start(2, 0, 1)
    for pid, subject in ((1, "output"), (2, "input")):
        problem = ProblemFile(id=pid, name=f"{pid}_P", path=f"{pid}_P.py")
        progress.problem_done(problem, ProblemResult(problem_id=pid, name=problem.name, status="no improvement",
                                                     ratios=ratios_of({"eager": _timing(0.526)}, subject)))
    progress.close()
    lines = screen.file.getvalue().splitlines()
    assert "[1/2] 1_P: no improvement, output vs eager PyTorch: 0.526x" in lines
    assert "[2/2] 2_P: no improvement, input kernel (unchanged) vs eager PyTorch: 0.526x" in lines
