"""`xe-forge check` and `xe-forge bench`: one verdict from the one evaluator, printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xe_forge.cli.common import (
    DeviceOpt,
    JsonOpt,
    KernelArg,
    RefOpt,
    SpecOpt,
    TargetOpt,
    TimeoutOpt,
    TrialsOpt,
    VariantOpt,
    console,
    run_command,
    settings_from_flags,
)
from xe_forge.cli.render import timing_line, verdict_table
from xe_forge.errors import InputError
from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, allowance_from_file, declared_allowance, input_allowance
from xe_forge.verify.models import Verdict


def check(
    candidate: KernelArg,
    reference: RefOpt = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    baseline: Annotated[Path | None, typer.Option("--baseline", help="Kernel whose torch delegations (e.g. a cuDNN "
                                                  "conv) the candidate may keep.")] = None,
    allow_torch: Annotated[str, typer.Option("--allow-torch", help="Comma-separated torch ops the candidate may "
                                             "call (e.g. self.conv,F.conv2d).")] = "",
    no_unseen: Annotated[bool, typer.Option("--no-unseen", help="Skip the unseen-shape checks.")] = False,
    trials: TrialsOpt = None,
    timeout: TimeoutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Verify a kernel against its reference: static checks, K trials, poisoning, ghost replay, unseen shapes."""
    flags = dict(locals())

    def go() -> int:
        s = settings_from_flags(flags)
        return check_command(candidate, reference=reference, spec=spec, variant=variant, device=s.device,
                             target=s.target, baseline=baseline, allow_torch=allow_torch, unseen=not no_unseen,
                             trials=s.trials, timeout=s.timeout, as_json=as_json, console=console)

    code = run_command(go)
    raise typer.Exit(code=code)


def bench(
    kernel: KernelArg,
    reference: RefOpt = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time torch.compile of the reference.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before the timed run is killed.")] = 600.0,
    as_json: JsonOpt = False,
) -> None:
    """Time a kernel against its reference (interleaved, L2 flushed): median, spread, speedup, TFLOP/s."""
    flags = {"device": device, "target": target}  # bench keeps its own --timeout default (600 s)

    def go() -> int:
        s = settings_from_flags(flags)
        return bench_command(kernel, reference=reference, spec=spec, variant=variant, device=s.device,
                             target=s.target, compile_ref=compile_ref, timeout=timeout, as_json=as_json,
                             console=console)

    code = run_command(go)
    raise typer.Exit(code=code)


def _print_json(console: Console, data: object) -> None:
    console.print_json(json.dumps(data, default=str))


def _bad_input(verdict: Verdict, what: str) -> InputError:
    msg = "; ".join(f.message for f in verdict.findings) or "the reference cannot run"
    return InputError(f"{what}: {msg}")


def check_command(candidate: Path, *, reference: Path | None, spec: Path | None, variant: str | None,
                  device: str, target: str | None, baseline: Path | None, allow_torch: str, unseen: bool,
                  trials: int, timeout: float, as_json: bool, console: Console) -> int:
    problem = load_problem(candidate, reference, spec, variant)
    allow = declared_allowance(problem, allow_torch.split(","))
    allow |= allowance_from_file(baseline) if baseline else set()
    with Evaluator(device, target, timeout=timeout, trials=trials) as ev:
        for warning in [] if as_json else ev.warnings_for(problem):
            console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
        verdict = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, unseen=unseen, time_it=False)
    if verdict.bad_input:
        raise _bad_input(verdict, f"cannot check {candidate}")
    if as_json:
        _print_json(console, {"candidate": str(candidate), "reference": str(problem.reference.path),
                              "reference_is_self": problem.reference_is_self, "verdict": verdict.model_dump()})
    else:
        if problem.reference_is_self:
            console.print("[yellow]warning:[/yellow] no reference found; checking the kernel against itself "
                          "(pass --reference or add <stem>_pytorch.py)")
        console.print(verdict_table(verdict, f"xe-forge check {candidate} ({ev.device.kind}, {ev.target})"))
        console.print(("[green]PASSED[/green] " if verdict.passed else "[red]FAILED[/red] ") + escape(verdict.summary()))
    return 0 if verdict.passed else 1


def bench_command(kernel: Path, *, reference: Path | None, spec: Path | None, variant: str | None, device: str,
                  target: str | None, compile_ref: bool, timeout: float, as_json: bool, console: Console) -> int:
    problem = load_problem(kernel, reference, spec, variant)
    with Evaluator(device, target, timeout=timeout, trials=1) as ev:
        verdict = ev.evaluate(problem.kernel.source, problem, allow_torch=input_allowance(problem), time_it=True,
                              full=False, compile_baseline=compile_ref)
    if verdict.bad_input:
        raise _bad_input(verdict, f"cannot bench {kernel}")
    if as_json:
        _print_json(console, {"kernel": str(kernel), "verdict": verdict.model_dump()})
        return 0 if verdict.passed else 1
    if not verdict.passed:
        console.print(verdict_table(verdict, f"xe-forge bench {kernel}"))
        console.print("[red]not timed:[/red] the kernel does not pass its correctness check")
        return 1
    if not verdict.speed_measured:
        console.print(f"[yellow]{verdict.speed_note}[/yellow]: run `xe-forge bench` on the target GPU")
        return 0
    table = Table(title=f"xe-forge bench {kernel} ({ev.device.kind}, variant {problem.variant or 'default'})")
    table.add_column("baseline")
    table.add_column("kernel ms")
    table.add_column("baseline ms")
    table.add_column("speedup")
    table.add_column("detail")
    for name, t in verdict.timings.items():
        table.add_row(name, f"{t.candidate_ms:.4f}", f"{t.baseline_ms:.4f}",
                      f"{t.speedup:.3f}x" + (" (faster)" if t.faster else ""), timing_line(t))
    console.print(table)
    return 0
