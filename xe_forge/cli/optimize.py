"""`xe-forge optimize` and `xe-forge stages`: parse, call the pipeline, print."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from xe_forge.cli.common import (
    DeviceOpt,
    JsonOpt,
    RefOpt,
    SpecOpt,
    TargetOpt,
    TimeoutOpt,
    VariantOpt,
    console,
    run_command,
)


def optimize(
    kernel: Annotated[Path | None, typer.Argument(help="Kernel file: Model/ModelNew launching @triton.jit "
                                                  "kernels, plus get_inputs() and get_init_inputs(). Not needed "
                                                  "with --resume.")] = None,
    reference: RefOpt = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = "auto",
    target: TargetOpt = None,
    engine: Annotated[str, typer.Option("--engine", help="auto (LLM when a model is configured, else rules) | llm | "
                                        "rules (offline knowledge-base recipes).")] = "auto",
    model: Annotated[str | None, typer.Option("--model", help="Any LiteLLM model id (env XE_FORGE_MODEL); "
                                              "XE_FORGE_API_BASE / XE_FORGE_API_KEY or the provider's variables.")] = None,
    stages: Annotated[str | None, typer.Option("--stages", help="Comma-separated stages to run, in order "
                                               "(default: planned from the analysis).")] = None,
    max_iters: Annotated[int, typer.Option("--max-iters", help="CoVeR iterations per stage.")] = 4,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the best verified kernel here.")] = None,
    run_dir: Annotated[Path, typer.Option("--run-dir", help="Where run directories are created.")] = Path("runs"),
    resume: Annotated[str | None, typer.Option("--resume", help="Continue run RUN_ID after a crash or Ctrl-C.")] = None,
    kb: Annotated[list[Path] | None, typer.Option("--kb", help="Extra knowledge-base directory (repeatable).")] = None,
    timeout: TimeoutOpt = 300.0,
    profile: Annotated[bool, typer.Option("--profile", help="Profile the kernel before each stage (ncu on NVIDIA, "
                                          "VTune on Intel): the limiter steers the next candidate and the report "
                                          "shows the roofline. Without counters the run continues unprofiled.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Optimize a kernel through the nine stages; every accepted step verified against the reference."""
    from xe_forge.config import load_settings
    from xe_forge.errors import InputError
    from xe_forge.pipeline.progress import Progress
    from xe_forge.pipeline.run import OptimizeArgs
    from xe_forge.pipeline.run import optimize as run_optimize

    def go() -> int:
        if kernel is None and resume is None:
            raise InputError("give a KERNEL file to optimize, or --resume RUN_ID to continue a run")
        args = OptimizeArgs(kernel=str(kernel or ""), reference=str(reference) if reference else None,
                            spec=str(spec) if spec else None, variant=variant, device=device, target=target,
                            engine=engine, model=model, stages=stages, max_iters=max_iters, timeout=timeout,
                            kb_dirs=[str(d) for d in kb or []], profile=profile)
        result = run_optimize(args, load_settings(), run_dir_root=run_dir, resume=resume, output=output,
                              progress=Progress(quiet=as_json))
        if as_json:
            console.print_json(json.dumps(result.model_dump(), default=str))
        else:
            r = result.report
            console.print(f"[bold]{result.status}[/bold]: {r['speed']}")
            console.print(f"run {result.run_id}: {result.run_dir}/report.md, report.html, output.py")
            if r.get("warning"):
                console.print(f"[yellow]warning:[/yellow] {r['warning']}")
            if output and result.exit_code == 0:
                console.print(f"best verified kernel written to {output}")
        return result.exit_code

    raise typer.Exit(code=run_command(go))


def stages() -> None:
    """List the nine optimization stages in order, one line each."""
    from xe_forge.stages import load_stages

    for spec in load_stages().values():
        console.print(f"{spec.order}. [bold]{spec.name}[/bold]: {spec.summary}", highlight=False)
