"""CLI commands of the pipeline: optimize, stages (thin: parse, call, print)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from xe_forge.cli import (
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
    as_json: JsonOpt = False,
) -> None:
    """Optimize a kernel through the nine stages; every accepted step verified against the reference."""
    from xe_forge.config import load_settings
    from xe_forge.errors import InputError
    from xe_forge.pipeline import OptimizeArgs
    from xe_forge.pipeline import optimize as run_optimize
    from xe_forge.progress import Progress

    def go() -> int:
        if kernel is None and resume is None:
            raise InputError("give a KERNEL file to optimize, or --resume RUN_ID to continue a run")
        args = OptimizeArgs(kernel=str(kernel or ""), reference=str(reference) if reference else None,
                            spec=str(spec) if spec else None, variant=variant, device=device, target=target,
                            engine=engine, model=model, stages=stages, max_iters=max_iters, timeout=timeout,
                            kb_dirs=[str(d) for d in kb or []])
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


def batch(
    problems_dir: Annotated[Path, typer.Argument(help="KernelBench level directory (files <id>_<Ops>.py with Model, "
                                                 "get_inputs, get_init_inputs) or any directory in that format.")],
    seeds: Annotated[Path | None, typer.Option("--seeds", help="Seed Triton kernels matched by id (default: the "
                                               "bundled examples/).")] = None,
    only: Annotated[str | None, typer.Option("--only", help="Problem ids, e.g. 1-20,37.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Workers (default: one per GPU; 1 on the CPU).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Skip problems already finished in --out.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Batch output directory.")] = Path("batch-out"),
    engine: Annotated[str, typer.Option("--engine", help="auto | llm | rules.")] = "auto",
    model: Annotated[str | None, typer.Option("--model", help="LiteLLM model id (env XE_FORGE_MODEL).")] = None,
    device: DeviceOpt = "auto",
    target: TargetOpt = None,
    variant: VariantOpt = None,
    stages: Annotated[str | None, typer.Option("--stages", help="Stages to run for every problem.")] = None,
    max_iters: Annotated[int, typer.Option("--max-iters", help="CoVeR iterations per stage.")] = 4,
    time_limit: Annotated[float, typer.Option("--time-limit-per-problem", help="Seconds before a problem's process "
                                              "is killed.")] = 1800.0,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before one candidate evaluation is killed.")] = 300.0,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time torch.compile of each reference "
                                              "(GPU; adds compile time per problem).")] = False,
    export_trajectories: Annotated[Path | None, typer.Option("--export-trajectories", help="Write every candidate "
                                                             "(stage, prompt hash, code, verdict) as JSONL.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Optimize many KernelBench-format problems: resumable, one worker per GPU, fast_p report."""
    from xe_forge.batch import BatchOptions, run_batch
    from xe_forge.batch_report import export_trajectories as export
    from xe_forge.batch_report import render_markdown
    from xe_forge.progress import BatchProgress

    def go() -> int:
        opts = BatchOptions(problems_dir=str(problems_dir), seeds_dir=str(seeds) if seeds else None, only=only,
                            workers=workers, resume=resume, out=str(out), engine=engine, model=model, device=device,
                            target=target, variant=variant, stages=stages, max_iters=max_iters, time_limit=time_limit,
                            compile=compile_ref, timeout=timeout)
        summary = run_batch(opts, progress=None if as_json else BatchProgress())
        if export_trajectories:
            n = export(Path(out), export_trajectories)
            if not as_json:
                console.print(f"{n} candidates written to {export_trajectories}")
        if as_json:
            console.print_json(json.dumps(summary, default=str))
        else:
            console.print(render_markdown(summary), highlight=False)
            console.print(f"report: {out}/summary.md, {out}/report.html")
        return 0 if summary["correct"] else 1

    raise typer.Exit(code=run_command(go))


def distill(
    run_id: Annotated[str, typer.Argument(help="Run whose verified wins become draft patterns.")],
    run_dir: Annotated[Path, typer.Option("--run-dir", help="Where run directories live.")] = Path("runs"),
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Draft file (default: RUN/distilled.yaml).")] = None,
) -> None:
    """Turn a run's accepted candidates into draft knowledge-base patterns, for review."""
    from xe_forge.distill import write_distilled

    def go() -> int:
        path, n = write_distilled(run_dir / run_id, output)
        console.print(f"{n} draft entr{'y' if n == 1 else 'ies'} written to {path}; review, then `xe-forge kb add {path}`")
        return 0

    raise typer.Exit(code=run_command(go))


def register(app: typer.Typer) -> None:
    from xe_forge.kb.commands import kb_app

    kb_app.command("distill")(distill)
    app.command()(optimize)
    app.command()(batch)
    app.command()(stages)
    from xe_forge.llm_server import llm_app

    app.add_typer(llm_app, name="llm")
