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
    LowerBudgetOpt,
    MaxItersOpt,
    ModelOpt,
    PrecisionOpt,
    ProfileOpt,
    StagesOpt,
    TargetOpt,
    TimeoutOpt,
    TrialsOpt,
    VariantOpt,
    console,
    err_console,
    run_command,
    settings_from_flags,
)


def batch(
    problems_dir: Annotated[Path, typer.Argument(help="Problems, in either layout: KernelBench files <id>_<Ops>.py "
                                                 "(Model, get_inputs, get_init_inputs; seeds from --seeds), or folders "
                                                 "<id>_<Ops>/ as in examples/ (kernel_pytorch.py the reference, "
                                                 "kernel.py the seed, spec.yaml).")],
    seeds: Annotated[Path | None, typer.Option("--seeds", help="Seed Triton kernels matched by id, for problems "
                                               "without their own (default: the bundled examples/).")] = None,
    no_seeds: Annotated[bool, typer.Option("--no-seeds", help="Port every problem (the offline port: the general "
                                           "Triton path, TorchInductor's lowering as its fast path on a GPU; then the "
                                           "LLM if configured), taking no seed from --seeds.")] = False,
    port_only: Annotated[bool, typer.Option("--port-only", help="Stop each problem at its verified port (implies "
                                            "--no-seeds): no optimize stages; the port's own verification times it "
                                            "against eager (and torch.compile with --compile).")] = False,
    lower_budget: LowerBudgetOpt = None,
    precision: PrecisionOpt = None,
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
    time_limit: Annotated[float, typer.Option("--time-limit-per-problem", help="Seconds a problem's process may run, "
                                              "counted once its imports are done, before it is killed.")] = 1800.0,
    timeout: TimeoutOpt = None,
    trials: TrialsOpt = None,
    profile: ProfileOpt = None,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time each seed against torch.compile "
                                              "(GPU; the output is always timed against eager and torch.compile; "
                                              "this adds the seed's compile time per problem).")] = False,
    count_degenerate: Annotated[bool, typer.Option("--count-degenerate", help="Count speedups on problems whose "
                                                   "reference is degenerate (constant or near-zero output) in "
                                                   "fast_p; by default they count only as correct.")] = False,
    export_trajectories: Annotated[Path | None, typer.Option("--export-trajectories", help="Write every candidate "
                                                             "(stage, prompt hash, code, verdict) as JSONL.")] = None,
    ray: Annotated[str | None, typer.Option("--ray", help="Run on a Ray cluster: auto (the one this machine "
                                            "belongs to, or RAY_ADDRESS) or HOST:PORT, one task per problem "
                                            "(docs/RAY.md). Default: XE_FORGE_RAY_ADDRESS, else local "
                                            "workers.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Optimize many problems (KernelBench files, or folders as in examples/): resumable, one worker per GPU
    (or a Ray task each), fast_p report."""
    from xe_forge.batch.models import BatchRequest
    from xe_forge.batch.report import export_trajectories as export
    from xe_forge.batch.report import headline_lines, render_markdown, render_table
    from xe_forge.batch.runner import run_batch
    from xe_forge.config import RunRequest
    from xe_forge.pipeline.progress import BatchProgress

    flags = dict(locals())

    def go() -> int:
        settings = settings_from_flags(flags)
        request = BatchRequest(problems_dir=str(problems_dir), seeds_dir=str(seeds) if seeds else None, only=only,
                               workers=workers, resume=resume, out=str(out), time_limit=time_limit,
                               compile=compile_ref, count_degenerate=count_degenerate, no_seeds=no_seeds,
                               port_only=port_only,
                               ray=ray or settings.ray_address,
                               run=RunRequest.from_settings(settings, variant=variant, stages=stages))
        progress = BatchProgress(quiet=as_json)
        try:
            summary = run_batch(request, progress=progress)
        finally:
            progress.close()
        if export_trajectories:
            n = export(Path(out), export_trajectories)
            if not as_json:
                console.print(f"{n} candidates written to {export_trajectories}")
        if as_json:
            console.print_json(json.dumps(summary, default=str))
        elif console.is_terminal:  # a table that fits the terminal; summary.md keeps the Markdown
            for line in headline_lines(summary):
                console.print(line, highlight=False, markup=False)
            console.print(render_table(summary))
            console.print(f"report: {out}/summary.md, {out}/report.html", highlight=False, markup=False)
        else:
            console.print(render_markdown(summary), highlight=False, markup=False)
            console.print(f"report: {out}/summary.md, {out}/report.html", highlight=False, markup=False)
        if summary["interrupted"]:
            err_console.print(f"interrupted: {len(summary['unfinished'])} problem(s) not finished; "
                              f"`xe-forge batch {problems_dir} --out {out} --resume` continues", highlight=False,
                              markup=False)
            return 130
        return 0 if summary["correct"] else 1

    raise typer.Exit(code=run_command(go))
