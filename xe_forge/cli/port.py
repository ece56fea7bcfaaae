"""`xe-forge port`: a verified Triton port of a PyTorch problem, lowered by TorchInductor (offline, no LLM)."""

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
    SpecOpt,
    TargetOpt,
    TrialsOpt,
    VariantOpt,
    console,
    run_command,
    settings_from_flags,
)
from xe_forge.cli.render import verdict_table
from xe_forge.errors import InputError


def port(
    problem: Annotated[Path, typer.Argument(help="PyTorch problem file (KernelBench format: Model, get_inputs, "
                                                 "get_init_inputs).")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Where to write the verified port "
                                                "(default: <stem>_port.py in the current directory).")] = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    lowered: Annotated[Path | None, typer.Option("--lowered", help="Package this lowering record (JSON, or a "
                                                 "JSONL dump from benchmarks/lower_dump.py) instead of lowering "
                                                 "here: how a port made on a GPU is checked on the CPU.")] = None,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time default torch.compile (GPU).")] = False,
    no_unseen: Annotated[bool, typer.Option("--no-unseen", help="Skip the unseen-shape checks.")] = False,
    trials: TrialsOpt = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before the lowering is killed (it autotunes); "
                                           "one verification gets at most 600.")] = 1200.0,
    as_json: JsonOpt = False,
) -> None:
    """Lower the reference with TorchInductor (Triton-only GEMM/conv templates) on the GPU, package the kernels
    as a standalone Model module, and verify it. Needs a GPU to lower (exit 3 without one); --lowered packages
    a recorded lowering anywhere, the CPU included."""
    flags = {"device": device, "target": target, "trials": trials}  # port keeps its own --timeout default (1200 s)

    def go() -> int:
        s = settings_from_flags(flags)
        return port_command(problem, output=output, spec=spec, variant=variant, device=s.device, target=s.target,
                            lowered=lowered, compile_ref=compile_ref, unseen=not no_unseen, trials=s.trials,
                            timeout=timeout, as_json=as_json, console=console)

    code = run_command(go)
    raise typer.Exit(code=code)


def port_command(problem_path: Path, *, output: Path | None, spec: Path | None, variant: str | None, device: str,
                 target: str | None, lowered: Path | None, compile_ref: bool, unseen: bool, trials: int,
                 timeout: float, as_json: bool, console: Console) -> int:
    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower.service import load_lowering, lower_problem, verify_port
    from xe_forge.verify.evaluate import Evaluator, declared_allowance

    problem = load_problem(problem_path, problem_path, spec, variant)
    lowering = load_lowering(lowered, problem) if lowered else lower_problem(problem, device=device, timeout=timeout)
    with Evaluator(device, target, timeout=min(timeout, 600.0), trials=trials) as ev:
        outcome = verify_port(problem, ev, lowering, allow_torch=declared_allowance(problem), unseen=unseen,
                              compile_baseline=compile_ref)
    if outcome.verdict is not None and outcome.verdict.bad_input:
        raise InputError(f"cannot port {problem_path}: " + "; ".join(f.message for f in outcome.verdict.findings))
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
    for note in outcome.packaged.notes if outcome.packaged else []:
        console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)
    if outcome.passed:
        console.print(f"[green]PORTED[/green] {escape(outcome.verdict.summary())} -> {escape(str(out))}")
        return 0
    console.print(f"[red]NOT PORTED[/red] {escape(outcome.reason)}", highlight=False)
    return 1
