"""One function per command: load inputs, run the library, print, return the exit code."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xe_forge.errors import InputError
from xe_forge.kernel import load_problem
from xe_forge.render import timing_line, verdict_table
from xe_forge.verify.evaluate import Evaluator, allowance_from_file, declared_allowance, input_allowance
from xe_forge.verify.models import Verdict


def _print_json(console: Console, data: object) -> None:
    console.print_json(json.dumps(data, default=str))


def _bad_input(verdict: Verdict, what: str) -> InputError:
    msg = "; ".join(f.message for f in verdict.findings) or "the reference cannot run"
    return InputError(f"{what}: {msg}")


def check_command(candidate: Path, *, reference: Path | None, spec: Path | None, variant: str | None,
                  device: str, target: str | None, baseline: Path | None, allow_torch: str, unseen: bool,
                  trials: int, timeout: float, as_json: bool, console: Console) -> int:
    problem = load_problem(candidate, reference, spec, variant)
    allow = declared_allowance(problem, allow_torch.split(","))
    allow |= allowance_from_file(baseline) if baseline else set()
    with Evaluator(device, target, timeout=timeout, trials=trials) as ev:
        for warning in [] if as_json else ev.warnings_for(problem):
            console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
        verdict = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, unseen=unseen, time_it=False)
    if verdict.bad_input:
        raise _bad_input(verdict, f"cannot check {candidate}")
    if as_json:
        _print_json(console, {"candidate": str(candidate), "reference": str(problem.reference.path),
                              "reference_is_self": problem.reference_is_self, "verdict": verdict.model_dump()})
    else:
        if problem.reference_is_self:
            console.print("[yellow]warning:[/yellow] no reference found; checking the kernel against itself "
                          "(pass --reference or add <stem>_pytorch.py)")
        console.print(verdict_table(verdict, f"xe-forge check {candidate} ({ev.device.kind}, {ev.target})"))
        console.print(("[green]PASSED[/green] " if verdict.passed else "[red]FAILED[/red] ") + escape(verdict.summary()))
    return 0 if verdict.passed else 1


def bench_command(kernel: Path, *, reference: Path | None, spec: Path | None, variant: str | None, device: str,
                  target: str | None, compile_ref: bool, timeout: float, as_json: bool, console: Console) -> int:
    problem = load_problem(kernel, reference, spec, variant)
    with Evaluator(device, target, timeout=timeout, trials=1) as ev:
        verdict = ev.evaluate(problem.kernel.source, problem, allow_torch=input_allowance(problem), time_it=True,
                              full=False, compile_baseline=compile_ref)
    if verdict.bad_input:
        raise _bad_input(verdict, f"cannot bench {kernel}")
    if as_json:
        _print_json(console, {"kernel": str(kernel), "verdict": verdict.model_dump()})
        return 0 if verdict.passed else 1
    if not verdict.passed:
        console.print(verdict_table(verdict, f"xe-forge bench {kernel}"))
        console.print("[red]not timed:[/red] the kernel does not pass its correctness check")
        return 1
    if not verdict.speed_measured:
        console.print(f"[yellow]{verdict.speed_note}[/yellow]: run `xe-forge bench` on the target GPU")
        return 0
    table = Table(title=f"xe-forge bench {kernel} ({ev.device.kind}, variant {problem.variant or 'default'})")
    table.add_column("baseline")
    table.add_column("kernel ms")
    table.add_column("baseline ms")
    table.add_column("speedup")
    table.add_column("detail")
    for name, t in verdict.timings.items():
        table.add_row(name, f"{t.candidate_ms:.4f}", f"{t.baseline_ms:.4f}",
                      f"{t.speedup:.3f}x" + (" (faster)" if t.faster else ""), timing_line(t))
    console.print(table)
    return 0


def doctor_command(*, as_json: bool, console: Console) -> int:
    from xe_forge.config import load_settings
    from xe_forge.paths import data_dir
    from xe_forge.targets.base import registered

    info: dict[str, object] = {"devices": {}}
    for kind, cls in registered().items():
        entry: dict[str, object] = {"available": False}
        try:
            if cls.available():
                dev = cls()
                entry = {"available": True, "toolchain": str(dev.toolchain()),
                         "properties": dev.properties().model_dump()}
                if hasattr(dev, "detected_target"):
                    entry["target"] = dev.detected_target()
        except Exception as exc:  # a broken driver is a finding, not a crash
            entry = {"available": False, "error": f"{type(exc).__name__}: {exc}"}
        info["devices"][kind] = entry  # type: ignore[index]
    try:
        import torch

        info["torch"] = torch.__version__
    except ImportError:
        info["torch"] = "not installed (pip install 'xe-forge[cpu]')"
    settings = load_settings()
    info["llm"] = {"model": settings.model or "not configured (rules engine is the default)",
                   "api_base": settings.api_base or "provider default", "api_key": settings.key_source() or "none set"}
    info["knowledge_base"] = {"bundled": str(data_dir("knowledge_base")),
                              "user": os.environ.get("XE_FORGE_KB_PATH", "not set")}
    if as_json:
        _print_json(console, info)
        return 0
    table = Table(title="xe-forge doctor")
    table.add_column("item")
    table.add_column("value", overflow="fold")
    for kind, entry in info["devices"].items():  # type: ignore[union-attr]
        if entry.get("available"):
            props = entry["properties"]
            value = f"{props['name']} ({props['compute_units']} units), {entry['toolchain']}"
            value += f", target {entry['target']}" if "target" in entry else ""
        else:
            value = "not available" + (f": {entry['error']}" if "error" in entry else "")
        table.add_row(f"device {kind}", value)
    table.add_row("torch", str(info["torch"]))
    for k, v in info["llm"].items():  # type: ignore[union-attr]
        table.add_row(f"llm {k}", str(v))
    for k, v in info["knowledge_base"].items():  # type: ignore[union-attr]
        table.add_row(f"knowledge base ({k})", v)
    console.print(table)
    return 0
