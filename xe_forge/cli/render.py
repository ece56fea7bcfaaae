"""Terminal rendering of verdicts and timings (rich); the CLI prints, this module formats."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from xe_forge.pipeline.progress import RAISE_TIMEOUT
from xe_forge.pipeline.status import Skipped, timed_out, unseen_shapes
from xe_forge.verify.models import Timing, TrialResult, Verdict, baseline_name


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
        if report.unseen:
            table.add_row(f"{report.variant}: shape", "", ", ".join(f"{k}={v}" for k, v in report.dims.items()))
        elif report.inputs:
            table.add_row(f"{report.variant}: inputs", "", escape("; ".join(report.inputs)))
        for i, trial in enumerate(report.trials):
            errs = [c.max_abs_err for c in trial.comparisons if c.max_abs_err is not None]
            detail = (f"max |err| {max(errs):.2e} (rtol {report.rtol:g}, atol {report.atol:g}, {report.dtype}; "
                      f"{trial.weights} weights, {trial.inputs} inputs)") if errs else ""
            bad = [c.note for c in trial.comparisons if not c.passed and c.note] + _messages(trial, report.trials[:i])
            table.add_row(f"{report.variant}: {trial.label}", _ok(trial.passed), escape("; ".join(bad) or detail))
        if report.ghost_changed is not None:
            table.add_row(f"{report.variant}: Triton launches", _ok(report.launches > 0), f"{report.launches} per forward")
            table.add_row(f"{report.variant}: ghost replay", _ok(report.ghost_changed),
                          "output changes when kernels are no-ops" if report.ghost_changed else "output unchanged")
        if report.audit is not None:
            table.add_row(f"{report.variant}: torch audit", _ok(_audit_clean(report)), _audit_line(report))
        for flag in report.degenerate:
            table.add_row(f"{report.variant}: degenerate reference", "[yellow]flag[/yellow]", flag)
        if report.frozen:
            table.add_row("unseen shapes: fixed dims", "[yellow]note[/yellow]",
                          escape("; ".join(f"{k} ({why})" for k, why in report.frozen.items())))
    for f in verdict.findings:
        if not any(f.message in t.findings[0].message for r in verdict.correctness for t in r.trials if t.findings):
            table.add_row(f.check, "[red]fail[/red]", escape(f.render()))
    for name, t in verdict.timings.items():
        table.add_row(f"speed: kernel vs {baseline_name(name)}", "[green]faster[/green]" if t.faster else "not faster",
                      timing_line(t, name))
    if not verdict.speed_measured:
        note = verdict.speed_note.removeprefix("speed not measured: ")  # the result column says it already
        table.add_row("speed", "[yellow]not measured[/yellow]", note or "timing was not requested")
    for note in verdict.notes:
        table.add_row("note", "[yellow]note[/yellow]", escape(note))
    if verdict.phase_seconds:
        top = list(verdict.phase_seconds.items())[:6]
        table.add_row("time", "", f"{verdict.seconds:.1f} s: " + ", ".join(f"{k} {v:.1f} s" for k, v in top))
    return table


def _messages(trial: TrialResult, earlier: list[TrialResult]) -> list[str]:
    """A trial's findings; 'cached on input identity?' only where the earlier, fresh-storage trials passed:
    a kernel that is wrong on every input is wrong, not caching."""
    wrong_anyway = any(not t.passed for t in earlier)
    return [f.message for f in trial.findings if not (wrong_anyway and f.check == "stale-output")]


def verdict_line(verdict: Verdict) -> str:
    """One line: PASSED with what ran, or FAILED with where and why (no word said twice)."""
    if not verdict.passed:
        reasons = "; ".join(f.render() for f in verdict.findings[:3]) or "failed"
        return f"[red]FAILED[/red] at {verdict.stage_failed}: {escape(reasons)}"
    ran = []
    if verdict.correctness:
        main = verdict.correctness[0]
        ran.append(f"{main.variant}: {len(main.trials)} calls compared" + (", ghost replay" if main.ghost_changed else ""))
    n = unseen_shapes(verdict)
    if n:
        ran.append(f"{n} unseen shape{'s' if n > 1 else ''}")
    return "[green]PASSED[/green]" + (f" ({escape('; '.join(ran))})" if ran else "")


def skipped_lines(skipped: list[Skipped]) -> list[str]:
    return [f"[yellow]not checked:[/yellow] {escape(s.render())}" for s in skipped]


def timeout_hint(verdict: Verdict, timeout: float) -> str | None:
    """Said when an evaluation was killed at the timeout: how to give it longer."""
    if not timed_out(verdict):
        return None
    return f"the evaluation was killed at the {timeout:g} s timeout; {RAISE_TIMEOUT}"


def _audit_clean(report) -> bool:
    a = report.audit
    return a.torch_flops == 0 and not a.device_to_host and not a.host_exits and not a.foreign_kernels


def _audit_line(report) -> str:
    a = report.audit
    parts = [f"{a.torch_flops:.3g} FLOP in torch outside allowances", f"{a.movement_bytes / 1e3:.3g} kB moved"]
    if a.allowed_flops:
        parts.insert(1, f"{a.allowed_flops:.3g} FLOP allowed")
    if a.kernel_list:
        parts.append(f"GPU kernel list {a.kernel_list}")
    return ", ".join(parts)


def timing_line(t: Timing, baseline: str = "baseline") -> str:
    """Both sides named as timed: 'kernel 1.2000 ms vs eager PyTorch 2.4000 ms, 2.000x, ...'."""
    parts = [f"kernel {t.candidate_ms:.4f} ms vs {baseline_name(baseline)} {t.baseline_ms:.4f} ms", f"{t.speedup:.3f}x",
             f"ratio spread ±{t.spread:.1%}, margin {t.margin:.1%}", f"{t.reps} interleaved pairs"]
    if t.tflops:
        parts.append(f"{t.tflops:.1f} TFLOP/s")
    return ", ".join(parts)


def _ok(passed: bool) -> str:
    return "[green]pass[/green]" if passed else "[red]fail[/red]"
