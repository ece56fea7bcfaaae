"""`xe-forge port`: a verified Triton port of a PyTorch problem (offline, no LLM).

The port is a general Triton path that holds at every shape, with TorchInductor's lowering as a
fast path for the shapes it was lowered and autotuned for (on a GPU; `--lowered` packages records
made there). Without a GPU and without a record the port is the general path alone.
"""

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
    LowerBudgetOpt,
    PrecisionOpt,
    SpecOpt,
    TargetOpt,
    TrialsOpt,
    VariantOpt,
    console,
    run_command,
    settings_from_flags,
)
from xe_forge.cli.render import verdict_table
from xe_forge.errors import EnvError, InputError
from xe_forge.pipeline.ratios import repeat_note

FAST_PATHS = ("exact", "dynamic")


def port(
    problem: Annotated[Path, typer.Argument(help="PyTorch problem file (KernelBench format: Model, get_inputs, "
                                                 "get_init_inputs).")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Where to write the verified port "
                                                "(default: <stem>_port.py in the current directory).")] = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    lowered: Annotated[list[Path] | None, typer.Option("--lowered", help="Package this lowering record (JSON, or a "
                                                       "JSONL dump from benchmarks/lower_dump.py) instead of "
                                                       "lowering here: how a port made on a GPU is checked on the "
                                                       "CPU. Repeat for more fast paths.")] = None,
    shapes: Annotated[list[str] | None, typer.Option("--shapes", help="One more fast path, lowered and autotuned at "
                                                     "these shapes: a spec variant's name, or NAME=INT,... over the "
                                                     "variant's dims (without a spec: module constants, e.g. "
                                                     "batch_size=64). Repeatable.")] = None,
    fast_path: Annotated[str, typer.Option("--fast-path", help="exact: a fast path serves only the exact sizes it was "
                                           "autotuned for; dynamic: any sizes its own asserts and guards admit.")]
    = "exact",
    lower_budget: LowerBudgetOpt = None,
    precision: PrecisionOpt = None,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time default torch.compile (GPU).")] = False,
    no_unseen: Annotated[bool, typer.Option("--no-unseen", help="Skip the unseen-shape checks.")] = False,
    trials: TrialsOpt = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before the lowering is killed (it autotunes); "
                                           "one verification gets at most 600.")] = 1200.0,
    as_json: JsonOpt = False,
) -> None:
    """Port the reference to Triton: a general path for every shape, plus TorchInductor's lowering (Triton-only
    GEMM/conv templates, autotuned) as the fast path for the shapes it was lowered for; verify it. Lowering needs
    a GPU; without one (and without --lowered) the port is the general path alone."""
    flags = {"device": device, "target": target, "trials": trials, "lower_budget": lower_budget,
             "precision": precision}

    def go() -> int:
        if fast_path not in FAST_PATHS:
            raise InputError(f"--fast-path {fast_path!r}: expected one of {', '.join(FAST_PATHS)}")
        s = settings_from_flags(flags)
        return port_command(problem, output=output, spec=spec, variant=variant, device=s.device, target=s.target,
                            lowered=lowered or [], shapes=shapes or [], mode=fast_path, budget_s=s.lower_budget,
                            precision=s.precision,
                            compile_ref=compile_ref, unseen=not no_unseen, trials=s.trials, timeout=timeout,
                            as_json=as_json, console=console)

    code = run_command(go)
    raise typer.Exit(code=code)


def port_command(problem_path: Path, *, output: Path | None, spec: Path | None, variant: str | None, device: str,
                 target: str | None, lowered: list[Path], shapes: list[str], mode: str, budget_s: float,
                 compile_ref: bool, precision: str | None = None, unseen: bool, trials: int, timeout: float, as_json: bool,
                 console: Console) -> int:
    import tempfile

    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower.fast_shapes import requests
    from xe_forge.proposers.lower.service import load_lowering, lower_requests, verify_port
    from xe_forge.verify.evaluate import Evaluator, declared_allowance

    problem = load_problem(problem_path, problem_path, spec, variant, precision=precision)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="xe-forge-shapes-") as tmp:
        wanted = requests(problem, shapes, Path(tmp))
        if lowered:
            lowerings = [load_lowering(p, problem) for p in lowered]
        else:
            try:
                lowerings = lower_requests(problem, wanted, device=device, timeout=timeout, budget_s=budget_s)
            except EnvError as err:
                lowerings = []
                notes.append(f"no fast path: {err.message}; the port is the general path alone")
        with Evaluator(device, target, timeout=min(timeout, 600.0), trials=trials) as ev:
            outcome = verify_port(problem, ev, lowerings, allow_torch=declared_allowance(problem), unseen=unseen,
                                  compile_baseline=compile_ref, mode=mode)  # type: ignore[arg-type]
    if outcome.verdict is not None and outcome.verdict.bad_input:
        raise InputError(f"cannot port {problem_path}: " + "; ".join(f.message for f in outcome.verdict.findings))
    outcome.notes = notes + outcome.notes
    out = output or Path(f"{problem_path.stem}_port.py")
    if outcome.passed:
        out.write_text(outcome.packaged.source)
    if as_json:
        console.print_json(json.dumps({"problem": str(problem_path), "passed": outcome.passed, "output":
                                       str(out) if outcome.passed else None, **outcome.model_dump(
                                           mode="json", exclude={"packaged": {"source"}})}, default=str))
        return 0 if outcome.passed else 1
    if outcome.verdict is not None:
        console.print(verdict_table(outcome.verdict, f"xe-forge port {problem_path} ({ev.device.kind})"))
    for label, path in outcome.paths.items():
        sig = outcome.packaged.signatures.get(path, "") if outcome.packaged else ""
        console.print(f"[cyan]path:[/cyan] {escape(label)} -> {escape(path)}" + (f" ({escape(sig)})" if sig else ""),
                      highlight=False)
    for note in outcome.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)
    if outcome.passed:
        console.print(f"[green]PORTED[/green] {escape(outcome.verdict.summary())} -> {escape(str(out))}")
        if outcome.verdict.timings:
            console.print(f"({repeat_note(str(out))})", highlight=False, markup=False, soft_wrap=True)
        return 0
    console.print(f"[red]NOT PORTED[/red] {escape(outcome.reason)}", highlight=False)
    return 1
