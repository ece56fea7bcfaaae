"""`xe-forge optimize` and `xe-forge stages`: parse, call the pipeline, print."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from xe_forge.cli.common import (
    BudgetOpt,
    DeviceOpt,
    EngineOpt,
    JsonOpt,
    MaxItersOpt,
    ModelOpt,
    ProfileOpt,
    ReasoningEffortOpt,
    RefOpt,
    SpecOpt,
    StagesOpt,
    TargetOpt,
    TimeoutOpt,
    TrialsOpt,
    VariantOpt,
    console,
    run_command,
    settings_from_flags,
)
from xe_forge.cli.render import skipped_lines
from xe_forge.pipeline.ratios import repeat_note

if TYPE_CHECKING:
    from xe_forge.pipeline.run import OptimizeResult


def optimize(
    kernel: Annotated[Path | None, typer.Argument(help="Kernel file: Model/ModelNew launching @triton.jit "
                                                  "kernels, plus get_inputs() and get_init_inputs(). Not needed "
                                                  "with --resume.")] = None,
    reference: RefOpt = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    engine: EngineOpt = None,
    model: ModelOpt = None,
    llm_reasoning_effort: ReasoningEffortOpt = None,
    budget: BudgetOpt = None,
    stages: StagesOpt = None,
    max_iters: MaxItersOpt = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the best verified kernel here "
                                                "(remembered by --resume).")] = None,
    run_dir: Annotated[Path | None, typer.Option("--run-dir", help="Where run directories are created. Default: "
                                                 "XE_FORGE_RUN_DIR, else runs/.")] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue run RUN_ID after a crash, Ctrl-C, a failing "
                                               "endpoint or a spent budget, with its original options (options "
                                               "given again replace them, e.g. a larger --budget).")] = None,
    kb: Annotated[list[Path] | None, typer.Option("--kb", help="Extra knowledge-base directory (repeatable).")] = None,
    timeout: TimeoutOpt = None,
    trials: TrialsOpt = None,
    profile: ProfileOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Optimize a kernel through the nine stages; every accepted step verified against the reference."""
    from xe_forge.config import RunOptions, RunRequest
    from xe_forge.errors import InputError
    from xe_forge.pipeline.progress import Progress
    from xe_forge.pipeline.run import optimize as run_optimize

    flags = dict(locals())

    def go() -> int:
        if kernel is None and resume is None:
            raise InputError("give a KERNEL file to optimize, or --resume RUN_ID to continue a run")
        settings = settings_from_flags(flags)
        request = RunRequest.from_settings(settings, kernel=str(kernel or ""), reference=_text(reference),
                                           spec=_text(spec), variant=variant, stages=stages,
                                           kb_dirs=[str(d) for d in kb or []], output=_text(output))
        given = [k for k, v in flags.items() if v is not None and (k in RunOptions.model_fields or k == "output")]
        result = run_optimize(request, settings, resume=resume, given=given, progress=Progress(quiet=as_json))
        if as_json:
            console.print_json(result.model_dump_json())
        else:
            _summary(result)
        return result.exit_code

    raise typer.Exit(code=run_command(go))


def _summary(result: OptimizeResult) -> None:
    """The headline (the status and every check that did not run), each speed, and where the run is."""
    report = result.report
    console.print(f"[bold]{escape(report.headline or result.status)}[/bold]", highlight=False)
    for line in report.speed_lines():
        console.print(f"  speed: {escape(line)}", highlight=False)
    if report.ratios:
        console.print(f"  ({repeat_note(f'{result.run_dir}/output.py')})", highlight=False, soft_wrap=True)
    for line in skipped_lines([s for s in report.not_checked if s.check != "speed"]):  # said just above
        console.print(f"  {line}", highlight=False)
    if report.final.fell_back and report.final.fell_back_to != "input":
        console.print(f"the last stage's kernel failed the final check; the result is stage "
                      f"{report.final.fell_back_to}'s kernel", highlight=False)
    if report.llm.calls:
        console.print(f"LLM: {report.llm.render()}", highlight=False)
    console.print(f"run {result.run_id}: {result.run_dir}/report.md, report.html, output.py", highlight=False)
    if result.output:
        console.print(f"best verified kernel written to {result.output}", highlight=False)
    if result.stopped_early:
        console.print(f"stopped early ({report.llm.stopped}); not run: {', '.join(report.not_run)}. Continue with a "
                      f"larger budget: {result.resume} --budget ...", highlight=False, soft_wrap=True)


def _text(path: Path | None) -> str | None:
    return str(path) if path else None


def stages() -> None:
    """List the nine optimization stages in order, one line each."""
    from xe_forge.stages import load_stages

    for spec in load_stages().values():
        console.print(f"{spec.order}. [bold]{spec.name}[/bold]: {spec.summary}", highlight=False)
