"""Terminal rendering of verdicts and timings (rich); the CLI prints, this module formats."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from xe_forge.verify.models import Timing, Verdict


def verdict_table(verdict: Verdict, title: str) -> Table:
    table = Table(title=title, show_lines=False)
    table.add_column("check")
    table.add_column("result")
    table.add_column("detail", overflow="fold")
    if verdict.stage_failed == "static" or (not verdict.correctness and verdict.findings):
        for f in verdict.findings:
            table.add_row(f.check, "[red]fail[/red]", escape(f.render()))
        return table
    for report in verdict.correctness:
        for trial in report.trials:
            errs = [c.max_abs_err for c in trial.comparisons if c.max_abs_err is not None]
            detail = f"max |err| {max(errs):.2e} (rtol {report.rtol:g}, atol {report.atol:g}, {report.dtype})" if errs else ""
            bad = [c.note for c in trial.comparisons if not c.passed and c.note] + [f.message for f in trial.findings]
            table.add_row(f"{report.variant}: {trial.label}", _ok(trial.passed), escape("; ".join(bad) or detail))
        if report.ghost_changed is not None:
            table.add_row(f"{report.variant}: Triton launches", _ok(report.launches > 0), f"{report.launches} per forward")
            table.add_row(f"{report.variant}: ghost replay", _ok(report.ghost_changed),
                          "output changes when kernels are no-ops" if report.ghost_changed else "output unchanged")
        for flag in report.degenerate:
            table.add_row(f"{report.variant}: degenerate reference", "[yellow]flag[/yellow]", flag)
    for f in verdict.findings:
        if not any(f.message in t.findings[0].message for r in verdict.correctness for t in r.trials if t.findings):
            table.add_row(f.check, "[red]fail[/red]", escape(f.render()))
    for name, t in verdict.timings.items():
        table.add_row(f"speed vs {name}", "[green]faster[/green]" if t.faster else "not faster", timing_line(t))
    if not verdict.speed_measured:
        table.add_row("speed", "[yellow]not measured[/yellow]", verdict.speed_note or "timing was not requested")
    return table


def timing_line(t: Timing) -> str:
    parts = [f"{t.candidate_ms:.4f} ms vs {t.baseline_ms:.4f} ms", f"{t.speedup:.3f}x",
             f"margin ±{t.margin:.1%}", f"{t.reps} reps"]
    if t.tflops:
        parts.append(f"{t.tflops:.1f} TFLOP/s")
    return ", ".join(parts)


def _ok(passed: bool) -> str:
    return "[green]pass[/green]" if passed else "[red]fail[/red]"
