"""`xe-forge batch`: many KernelBench-format problems, resumable, one worker per GPU or a Ray cluster (--ray)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from xe_forge.cli.common import (
    DeviceOpt,
    EngineOpt,
    JsonOpt,
    MaxItersOpt,
    ModelOpt,
    ProfileOpt,
    StagesOpt,
    TargetOpt,
    TimeoutOpt,
    TrialsOpt,
    VariantOpt,
    console,
    run_command,
    settings_from_flags,
)


def batch(
    problems_dir: Annotated[Path, typer.Argument(help="KernelBench level directory (files <id>_<Ops>.py with Model, "
                                                 "get_inputs, get_init_inputs) or any directory in that format.")],
    seeds: Annotated[Path | None, typer.Option("--seeds", help="Seed Triton kernels matched by id (default: the "
                                               "bundled examples/).")] = None,
    only: Annotated[str | None, typer.Option("--only", help="Problem ids, e.g. 1-20,37.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Workers (default: one per GPU; 1 on the CPU).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Skip problems already finished in --out.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Batch output directory.")] = Path("batch-out"),
    engine: EngineOpt = None,
    model: ModelOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    variant: VariantOpt = None,
    stages: StagesOpt = None,
    max_iters: MaxItersOpt = None,
    time_limit: Annotated[float, typer.Option("--time-limit-per-problem", help="Seconds before a problem's process "
                                              "is killed.")] = 1800.0,
    timeout: TimeoutOpt = None,
    trials: TrialsOpt = None,
    profile: ProfileOpt = None,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time torch.compile of each reference "
                                              "(GPU; adds compile time per problem).")] = False,
    export_trajectories: Annotated[Path | None, typer.Option("--export-trajectories", help="Write every candidate "
                                                             "(stage, prompt hash, code, verdict) as JSONL.")] = None,
    ray: Annotated[str | None, typer.Option("--ray", help="Run on a Ray cluster: auto (the one this machine "
                                            "belongs to, or RAY_ADDRESS) or HOST:PORT, one task per problem "
                                            "(docs/RAY.md). Default: XE_FORGE_RAY_ADDRESS, else local "
                                            "workers.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Optimize many KernelBench-format problems: resumable, one worker per GPU (or a Ray task each), fast_p report."""
    from xe_forge.batch.models import BatchRequest
    from xe_forge.batch.report import export_trajectories as export
    from xe_forge.batch.report import render_markdown
    from xe_forge.batch.runner import run_batch
    from xe_forge.config import RunRequest
    from xe_forge.pipeline.progress import BatchProgress

    flags = dict(locals())

    def go() -> int:
        settings = settings_from_flags(flags)
        request = BatchRequest(problems_dir=str(problems_dir), seeds_dir=str(seeds) if seeds else None, only=only,
                               workers=workers, resume=resume, out=str(out), time_limit=time_limit,
                               compile=compile_ref, ray=ray or settings.ray_address,
                               run=RunRequest.from_settings(settings, variant=variant, stages=stages))
        summary = run_batch(request, progress=None if as_json else BatchProgress())
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
