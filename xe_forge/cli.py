"""The `xe-forge` command line: parse, call one library function, print. No logic lives here.

Exit codes (DESIGN.md): 0 done; 1 ran, but verification failed or nothing improved; 2 bad input;
3 environment (no such device, toolchain missing, LLM unreachable when one was asked for).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402

from xe_forge.errors import ForgeError  # noqa: E402

app = typer.Typer(name="xe-forge", no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Take a correct Triton kernel and return a faster one, verified against its PyTorch "
                       "reference on the target GPU (Intel Xe2/Xe-HPC first, NVIDIA Hopper too; the CPU "
                       "runs Triton's interpreter for correctness only).")
console = Console()
err_console = Console(stderr=True)

KernelArg = Annotated[Path, typer.Argument(help="Kernel file: Model/ModelNew launching @triton.jit kernels, "
                                                "plus get_inputs() and get_init_inputs().")]
RefOpt = Annotated[Path | None, typer.Option("--reference", "-r", help="PyTorch reference (KernelBench problem "
                                             "file). Default: <stem>_pytorch.py beside the kernel, else the kernel "
                                             "itself (correctness is then relative to the input).")]
SpecOpt = Annotated[Path | None, typer.Option("--spec", "-s", help="Spec YAML (shapes, dtype, tolerances, unseen "
                                              "shapes). Default: <stem>.yaml or spec.yaml beside the kernel.")]
VariantOpt = Annotated[str | None, typer.Option("--variant", help="Spec variant to run (default: ci, else the "
                                                "first declared).")]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto | xpu | cuda | cpu (auto: xpu, then cuda, then cpu).")]
TargetOpt = Annotated[str | None, typer.Option("--target", help="Knowledge-base target: intel-xe2, intel-xe-hpc, "
                                               "intel-xe-hpg, nvidia-sm90 (default: detected; CPU: intel-xe2).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of tables.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="Seconds before a candidate run is killed.")]


def _fail(err: ForgeError) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {escape(str(err))}", highlight=False, soft_wrap=True)
    return typer.Exit(code=err.exit_code)


def run_command(fn, *args, **kwargs) -> int:
    """Call a library function; a ForgeError becomes one message and its exit code, never a traceback."""
    try:
        return fn(*args, **kwargs)
    except ForgeError as err:
        raise _fail(err) from None
    except KeyboardInterrupt:
        err_console.print("interrupted")
        raise typer.Exit(code=130) from None


@app.command()
def check(
    candidate: KernelArg,
    reference: RefOpt = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = "auto",
    target: TargetOpt = None,
    baseline: Annotated[Path | None, typer.Option("--baseline", help="Kernel whose torch delegations (e.g. a cuDNN "
                                                  "conv) the candidate may keep.")] = None,
    allow_torch: Annotated[str, typer.Option("--allow-torch", help="Comma-separated torch ops the candidate may "
                                             "call (e.g. self.conv,F.conv2d).")] = "",
    no_unseen: Annotated[bool, typer.Option("--no-unseen", help="Skip the unseen-shape checks.")] = False,
    trials: Annotated[int, typer.Option("--trials", help="Random-input trials.")] = 3,
    timeout: TimeoutOpt = 300.0,
    as_json: JsonOpt = False,
) -> None:
    """Verify a kernel against its reference: static checks, K trials, poisoning, ghost replay, unseen shapes."""
    from xe_forge.commands import check_command

    code = run_command(check_command, candidate, reference=reference, spec=spec, variant=variant, device=device,
                       target=target, baseline=baseline, allow_torch=allow_torch, unseen=not no_unseen,
                       trials=trials, timeout=timeout, as_json=as_json, console=console)
    raise typer.Exit(code=code)


@app.command()
def bench(
    kernel: KernelArg,
    reference: RefOpt = None,
    spec: SpecOpt = None,
    variant: VariantOpt = None,
    device: DeviceOpt = "auto",
    target: TargetOpt = None,
    compile_ref: Annotated[bool, typer.Option("--compile", help="Also time torch.compile of the reference.")] = False,
    timeout: TimeoutOpt = 600.0,
    as_json: JsonOpt = False,
) -> None:
    """Time a kernel against its reference (interleaved, L2 flushed): median, spread, speedup, TFLOP/s."""
    from xe_forge.commands import bench_command

    code = run_command(bench_command, kernel, reference=reference, spec=spec, variant=variant, device=device,
                       target=target, compile_ref=compile_ref, timeout=timeout, as_json=as_json, console=console)
    raise typer.Exit(code=code)


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Devices, toolchain versions, LLM configuration (never the key), knowledge-base location."""
    from xe_forge.commands import doctor_command

    raise typer.Exit(code=run_command(doctor_command, as_json=as_json, console=console))


def _mount_subcommands() -> None:
    """The kb sub-app and the pipeline commands live in their own modules; they import cli's options."""
    from xe_forge.kb.commands import kb_app
    from xe_forge.pipeline_cli import register

    app.add_typer(kb_app, name="kb", help="Knowledge base: list, show, search, validate, add, distill.")
    register(app)


_mount_subcommands()


def main() -> None:
    try:
        app()
    except ForgeError as err:  # pragma: no cover - commands already convert
        err_console.print(f"error: {err}")
        sys.exit(err.exit_code)
