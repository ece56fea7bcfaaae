"""`xe-forge profile`: hardware counters of a kernel's Triton kernels, its limiter and roofline position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xe_forge.cli.common import (
    DeviceOpt,
    JsonOpt,
    KernelArg,
    SpecOpt,
    TargetOpt,
    TimeoutOpt,
    VariantOpt,
    console,
    run_command,
    settings_from_flags,
)


def profile(
    kernel: KernelArg,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = None,
    target: TargetOpt = None,
    tool: Annotated[str | None, typer.Option("--tool", help="Profiler executable (default: ncu on NVIDIA, vtune on "
                                             "Intel, from PATH).")] = None,
    roofline: Annotated[Path | None, typer.Option("--roofline", help="Write the roofline plot (PNG) here.")] = None,
    timeout: TimeoutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Profile a kernel's Triton kernels (ncu / VTune): counters, limiter, roofline. Exit 3 when no counters."""
    flags = dict(locals())

    def go() -> int:
        s = settings_from_flags(flags)
        return profile_command(kernel, spec=spec, variant=variant, device=s.device, target=s.target, tool=tool,
                               roofline=roofline, timeout=s.timeout, as_json=as_json, console=console)

    raise typer.Exit(code=run_command(go))


def profile_command(kernel: Path, *, spec: Path | None, variant: str | None, device: str, target: str | None,
                    tool: str | None, roofline: Path | None, timeout: float, as_json: bool, console: Console) -> int:
    from xe_forge.problem.kernel import load_problem
    from xe_forge.problem.roofline import problem_facts
    from xe_forge.profile.collect import profile_source
    from xe_forge.profile.feedback import render_feedback
    from xe_forge.profile.limiter import diagnose
    from xe_forge.profile.plot import roofline_png
    from xe_forge.targets import get_device, resolve_target

    problem = load_problem(kernel, None, spec, variant)
    dev = get_device(device, target)
    tgt = resolve_target(dev, target)
    record = profile_source(problem.kernel.source, problem, device=dev.kind, target=tgt, timeout=timeout, tool=tool)
    diagnosis = diagnose(record, problem_facts(problem, tgt))
    if roofline is not None and diagnosis.roofline is not None:
        png = roofline_png([(f"{kernel.stem} ({diagnosis.limiter})", diagnosis.roofline)], f"{kernel} on {tgt}")
        if png:
            roofline.write_bytes(png)
    if as_json:
        console.print_json(json.dumps({"kernel": str(kernel), "record": record.model_dump(mode="json"),
                                       "diagnosis": diagnosis.model_dump(mode="json"),
                                       "feedback": render_feedback(record, diagnosis) if record.available else ""}))
    else:
        _print(console, kernel, record, diagnosis)
    return 3 if record.unavailable else 0


def _print(console: Console, kernel: Path, record, diagnosis) -> None:
    if record.unavailable:
        console.print(f"[yellow]profile unavailable:[/yellow] {escape(record.unavailable)}", highlight=False)
    else:
        table = Table(title=f"xe-forge profile {kernel} ({record.tool}, {record.target}, variant {record.variant})")
        for col in ("kernel", "us", "SM %", "DRAM %", "tensor %", "occupancy %", "regs", "spill B", "smem B",
                    "L2 hit %", "grid", "block"):
            table.add_column(col)
        for k in record.kernels:
            table.add_row(k.name, *(_fmt(v) for v in (k.duration_us, k.sm_throughput_pct, k.dram_throughput_pct,
                                                      k.tensor_pipe_pct, k.achieved_occupancy_pct,
                                                      k.registers_per_thread, k.spill_bytes_per_thread,
                                                      k.shared_mem_per_block, k.l2_hit_rate_pct)),
                          "x".join(map(str, k.grid or [])), "x".join(map(str, k.block or [])))
        console.print(table)
    console.print(f"limiter: [bold]{diagnosis.limiter}[/bold]", highlight=False)
    for reason in diagnosis.reasons:
        console.print(f"  - {escape(reason)}", highlight=False)
    point = diagnosis.roofline
    if point is not None and point.fraction_of_roof is not None:
        console.print(f"roofline: {point.time_us:.1f} us per call, {point.achieved_tflops or 0:.3g} TFLOP/s, "
                      f"{point.fraction_of_roof:.0%} of the roof at {point.intensity:.1f} FLOP/byte "
                      f"(ridge {point.ridge:.0f})", highlight=False)


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)
