"""`xe-forge batch`: many KernelBench-format problems, resumable, one worker per GPU."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from xe_forge.cli.common import DeviceOpt, JsonOpt, TargetOpt, VariantOpt, console, run_command


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
    profile: Annotated[bool, typer.Option("--profile", help="Profile each problem's kernels (ncu / VTune) and "
                                          "steer the next candidate by the limiter found.")] = False,
    export_trajectories: Annotated[Path | None, typer.Option("--export-trajectories", help="Write every candidate "
                                                             "(stage, prompt hash, code, verdict) as JSONL.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Optimize many KernelBench-format problems: resumable, one worker per GPU, fast_p report."""
    from xe_forge.batch.report import export_trajectories as export
    from xe_forge.batch.report import render_markdown
    from xe_forge.batch.runner import BatchOptions, run_batch
    from xe_forge.pipeline.progress import BatchProgress

    def go() -> int:
        opts = BatchOptions(problems_dir=str(problems_dir), seeds_dir=str(seeds) if seeds else None, only=only,
                            workers=workers, resume=resume, out=str(out), engine=engine, model=model, device=device,
                            target=target, variant=variant, stages=stages, max_iters=max_iters, time_limit=time_limit,
                            compile=compile_ref, timeout=timeout, profile=profile)
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
