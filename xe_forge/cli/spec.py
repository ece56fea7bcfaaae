"""`xe-forge spec init`: write a working spec for a kernel file (format: docs/SPEC.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from xe_forge.cli.common import KernelArg, RefOpt, console, err_console, run_command
from xe_forge.cli.render import verdict_line
from xe_forge.pipeline.progress import LiveStatus
from xe_forge.problem.kernel import spec_names_text

spec_app = typer.Typer(no_args_is_help=True, help="Problem specs: the shapes, dtypes and tolerances a kernel is "
                                                  "checked at (docs/SPEC.md).")


@spec_app.command("init")
def init(
    kernel: KernelArg,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Where to write the spec. Default: <stem>.yaml "
                                                "beside the kernel (the first of " + spec_names_text() + " that "
                                                "check and optimize look for).")] = None,
    reference: RefOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing spec file.")] = False,
    check: Annotated[bool, typer.Option("--check/--no-check", help="Check the kernel with the new spec on the CPU "
                                        "(as `xe-forge check --device cpu`).")] = True,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds the probe may take.")] = 600.0,
) -> None:
    """Write a spec from the kernel's get_inputs(), get_init_inputs() and module constants: dims named after
    the constants, a `ci` variant small enough for the interpreter, `bench-gpu` at the file's own sizes, and
    unseen shapes. The file is imported in a separate process, never in this one."""
    from xe_forge.spec_init.writer import init_spec

    def go() -> int:
        with LiveStatus(err_console) as status:
            status.phase(f"probing {kernel}: binding sizes to module constants, shrinking ci, checking it",
                         limit=timeout)
            done = init_spec(kernel, output=output, reference=reference, force=force, check=False, timeout=timeout)
            if check:
                status.phase(f"xe-forge check --device cpu {kernel} --spec {done.path}")
                from xe_forge.spec_init.writer import check_with

                done.verdict = check_with(kernel, reference, Path(done.path))
        p = done.probe
        console.print(f"wrote {done.path}", highlight=False, markup=False)
        console.print(f"  dims: {', '.join(f'{d}={v} (from {p.constants[d]})' for d, v in p.dims.items()) or 'none'}",
                      highlight=False, markup=False)
        console.print(f"  ci: {_dims(p.ci)}; flop: {p.flop or ('counted per variant' if p.flop_ci else 'none')}",
                      highlight=False, markup=False)
        console.print(f"  unseen shapes `check` runs: {len(p.unseen) + len(p.generated)} ({len(p.unseen)} written in "
                      f"the spec: {'; '.join(map(_dims, p.unseen)) or 'none'}; {len(p.generated)} it adds across the "
                      f"kernel's tiles: {'; '.join(_dims(g.dims) for g in p.generated) or 'none'}), "
                      "plus one more drawn in secret at each check where the dims allow it",
                      highlight=False, markup=False)
        if p.ci_error:
            console.print(f"[yellow]warning:[/yellow] no small ci size passed: {escape(p.ci_error)}", highlight=False)
        if done.verdict is not None:
            console.print("check with it: " + verdict_line(done.verdict), highlight=False)
            return 0 if done.verdict.passed and not p.ci_error else 1
        return 1 if p.ci_error else 0

    raise typer.Exit(code=run_command(go))


def _dims(dims: dict[str, int]) -> str:
    return ", ".join(f"{d}={v}" for d, v in dims.items()) or "none"
