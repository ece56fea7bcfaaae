"""The `xe-forge` command line: parse, call one library function, print. No logic lives here.

Exit codes (README): 0 done; 1 ran, but verification failed or nothing improved; 2 bad input;
3 environment (no such device, toolchain missing, LLM unreachable when one was asked for).
"""

from __future__ import annotations

import sys

import typer

from xe_forge.cli import batch, bench, check, doctor, kb, llm, optimize, port, profile, spec
from xe_forge.cli.common import err_console
from xe_forge.errors import ForgeError

app = typer.Typer(name="xe-forge", no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Take a correct Triton kernel and return a faster one, verified against its PyTorch "
                       "reference on the target GPU (Intel Xe2/Xe-HPC first, NVIDIA Hopper too; the CPU "
                       "runs Triton's interpreter for correctness only).")
app.command()(check.check)
app.command()(bench.bench)
app.command()(optimize.optimize)
app.command()(batch.batch)
app.command()(port.port)
app.command()(optimize.stages)
app.command()(profile.profile)
app.command()(doctor.doctor)
app.add_typer(kb.kb_app, name="kb", help="Knowledge base: list, show, search, validate, add, distill.")
app.add_typer(llm.llm_app, name="llm")
app.add_typer(spec.spec_app, name="spec")


def main() -> None:
    try:
        app()
    except ForgeError as err:  # pragma: no cover - commands already convert
        err_console.print(f"error: {err}")
        sys.exit(err.exit_code)
