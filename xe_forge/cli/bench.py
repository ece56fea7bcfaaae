"""`xe-forge bench`: time a kernel against eager PyTorch (and torch.compile) on the GPU; `--repeat N` does it
in N fresh processes and prints how far the figures move between them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xe_forge.cli.check import bad_input, print_json
from xe_forge.cli.common import (
    DeviceOpt,
    JsonOpt,
    KernelArg,
    RefOpt,
    SpecOpt,
    TargetOpt,
    VariantOpt,
    console,
    err_console,
    run_command,
    settings_from_flags,
)
from xe_forge.cli.render import verdict_table
from xe_forge.errors import EnvError
from xe_forge.pipeline.progress import LiveStatus
from xe_forge.problem.kernel import Problem, load_problem
from xe_forge.problem.signature import verdict_signature_error
from xe_forge.verify.evaluate import Evaluator, input_allowance
from xe_forge.verify.models import Verdict, baseline_name
from xe_forge.verify.repeat import RepeatResult, repeat_timing


def bench(
    kernel: KernelArg,
    reference: RefOpt = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time torch.compile of the reference.")] = False,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Time it in N fresh processes (new workers each) "
                                        "and print the spread of the figures across them.")] = 1,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before the timed run is killed.")] = 600.0,
    as_json: JsonOpt = False,
) -> None:
    """Time a kernel against its reference (interleaved, L2 flushed): median, spread, speedup, TFLOP/s."""
    flags = {"device": device, "target": target}  # bench keeps its own --timeout default (600 s)

    def go() -> int:
        s = settings_from_flags(flags)
        return bench_command(kernel, reference=reference, spec=spec, variant=variant, device=s.device,
                             target=s.target, compile_ref=compile_ref, repeat=repeat, timeout=timeout,
                             as_json=as_json, console=console)

    raise typer.Exit(code=run_command(go))


def bench_command(kernel: Path, *, reference: Path | None, spec: Path | None, variant: str | None, device: str,
                  target: str | None, compile_ref: bool, timeout: float, as_json: bool, console: Console,
                  repeat: int = 1) -> int:
    problem = load_problem(kernel, reference, spec, variant)
    with LiveStatus(err_console, enabled=not as_json) as status:
        def open_evaluator() -> Evaluator:
            ev = Evaluator(device, target, timeout=timeout, trials=1)
            if not ev.measures_speed:
                ev.close()
                raise EnvError(f"bench measures speed, and the {ev.device.kind} cannot: it runs Triton's interpreter",
                               hint="run `xe-forge bench` on the target GPU; `xe-forge check` verifies correctness here")
            return ev

        def time_once(ev: Evaluator) -> Verdict:
            return ev.evaluate(problem.kernel.source, problem, allow_torch=input_allowance(problem), time_it=True,
                               full=False, compile_baseline=compile_ref)

        def on_run(i: int, verdict: Verdict) -> None:
            status.phase(f"timed {i + 1} of {repeat} in fresh processes" + (f"; next: {i + 2}" if i + 1 < repeat else ""),
                         limit=timeout)

        status.phase(f"timing {problem.variant or 'get_inputs() shapes'}: correctness, then interleaved pairs against "
                     f"eager{' and torch.compile' if compile_ref else ''}" + (f", in {repeat} fresh processes"
                                                                               if repeat > 1 else ""), limit=timeout)
        result = repeat_timing(open_evaluator, time_once, repeat, on_run)
    return _print(console, kernel, problem, result, repeat, as_json)


def _print(console: Console, kernel: Path, problem: Problem, result: RepeatResult, repeat: int, as_json: bool) -> int:
    failed = result.first_failure
    if failed is not None:
        mismatch = verdict_signature_error(problem, failed)
        if mismatch is not None:
            raise mismatch
        if failed.bad_input:
            raise bad_input(failed, f"cannot bench {kernel}")
    if as_json:
        print_json(console, {"kernel": str(kernel), "verdict": result.verdicts[0].model_dump(),
                             "repeats": [v.model_dump() for v in result.verdicts],
                             "spread": {k: {"speedups": r.speedups, "median": r.median, "spread": r.spread}
                                        for k, r in result.by_baseline.items()}})
        return 0 if failed is None else 1
    if failed is not None and not failed.passed:
        console.print(verdict_table(failed, f"xe-forge bench {kernel}"))
        console.print("[red]not timed:[/red] the kernel does not pass its correctness check")
        return 1
    if failed is not None:
        console.print(f"[yellow]not timed:[/yellow] {escape(failed.speed_note or 'no timing came back')}")
        return 3
    verdict = result.verdicts[0]
    table = Table(title=f"xe-forge bench {kernel} ({verdict.device}, variant {problem.variant or 'default'})")
    for column in ("what was timed", "speedup", "kernel ms (IQR)", "baseline ms (IQR)", "ratio spread", "pairs"):
        table.add_column(column)
    for key, t in verdict.timings.items():
        table.add_row(f"kernel vs {baseline_name(key)}", f"{t.speedup:.3f}x" + (" (faster)" if t.faster else ""),
                      f"{t.candidate_ms:.4f} ± {t.candidate_spread_ms:.4f}", f"{t.baseline_ms:.4f} ± "
                      f"{t.baseline_spread_ms:.4f}", f"±{t.spread:.1%} (margin {t.margin:.1%})", str(t.reps))
    console.print(table)
    if repeat > 1:
        console.print(repeat_table(result))
    return 0


def repeat_table(result: RepeatResult) -> Table:
    """Per baseline: the speedup in each fresh process, the median, and how far they move."""
    runs = len(result.verdicts)
    table = Table(title=f"the same timing in {runs} fresh processes")
    table.add_column("kernel vs")
    for i in range(runs):
        table.add_column(f"run {i + 1}")
    for column in ("median", "spread (max-min)/median", "baseline ms, min-max"):
        table.add_column(column)
    for key, rep in result.by_baseline.items():
        table.add_row(baseline_name(key), *[f"{s:.3f}x" for s in rep.speedups], f"{rep.median:.3f}x",
                      f"{rep.spread:.1%}", f"{min(rep.baseline_ms):.4f}-{max(rep.baseline_ms):.4f}")
    return table
