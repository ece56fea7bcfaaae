"""`xe-forge check`: one verdict from the one evaluator, printed (`bench` lives in cli/bench.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

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
    err_console,
    run_command,
    settings_from_flags,
)
from xe_forge.cli.render import skipped_lines, timeout_hint, verdict_line, verdict_table
from xe_forge.errors import InputError
from xe_forge.pipeline.progress import LiveStatus
from xe_forge.pipeline.status import skipped_checks
from xe_forge.problem.kernel import Problem, load_problem
from xe_forge.problem.signature import verdict_signature_error
from xe_forge.verify.evaluate import Evaluator, allowance_from_file, declared_allowance
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


def print_json(console: Console, data: object) -> None:
    console.print_json(json.dumps(data, default=str))


def bad_input(verdict: Verdict, what: str) -> InputError:
    msg = "; ".join(f.message for f in verdict.findings) or "the reference cannot run"
    return InputError(f"{what}: {msg}")


def _what_runs(problem: Problem, trials: int, unseen: bool) -> str:
    """The phases one evaluation goes through, for the live status (the worker reports none of them)."""
    variant = problem.variant or "get_inputs() shapes"
    steps = ["static checks", "worker start", "import and compile", f"{trials} trials", "ghost replay"]
    if unseen:
        steps.append("unseen shapes")
    return f"verifying {variant}: " + ", ".join(steps)


def check_command(candidate: Path, *, reference: Path | None, spec: Path | None, variant: str | None,
                  device: str, target: str | None, baseline: Path | None, allow_torch: str, unseen: bool,
                  trials: int, timeout: float, as_json: bool, console: Console) -> int:
    with LiveStatus(err_console, enabled=not as_json) as status:
        # read first (milliseconds, and no user code runs): bad input, such as a kernel whose constructor or
        # forward cannot take the reference's arguments, is one message before any worker starts
        status.phase(f"reading {candidate}")
        problem = load_problem(candidate, reference, spec, variant)
        status.phase("starting the workers and loading the target's constraints")
        with Evaluator(device, target, timeout=timeout, trials=trials) as ev:
            allow = declared_allowance(problem, allow_torch.split(","))
            allow |= allowance_from_file(baseline) if baseline else set()
            warnings = [] if as_json else ev.warnings_for(problem)
            status.phase(_what_runs(problem, trials, unseen), limit=timeout)
            verdict = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, unseen=unseen, time_it=False)
    mismatch = verdict_signature_error(problem, verdict)
    if mismatch is not None:
        raise mismatch
    if verdict.bad_input:
        raise bad_input(verdict, f"cannot check {candidate}")
    skipped = skipped_checks(verdict, problem, unseen_requested=unseen)
    if as_json:
        print_json(console, {"candidate": str(candidate), "reference": str(problem.reference.path),
                              "reference_is_self": problem.reference_is_self, "verdict": verdict.model_dump(),
                              "not_checked": [s.model_dump() for s in skipped]})
        return 0 if verdict.passed else 1
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
    if problem.spec is None:
        console.print(f"hint: `xe-forge spec init {candidate}` writes a spec: small `ci` shapes, unseen shapes "
                      "(docs/SPEC.md)", highlight=False, markup=False)
    console.print(verdict_table(verdict, f"xe-forge check {candidate} ({ev.device.kind}, {ev.target})"))
    console.print(verdict_line(verdict), highlight=False)
    for line in skipped_lines(skipped):
        console.print(line, highlight=False)
    hint = timeout_hint(verdict, timeout)
    if hint:
        console.print(f"[yellow]hint:[/yellow] {escape(hint)}", highlight=False)
    return 0 if verdict.passed else 1
