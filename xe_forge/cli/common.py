"""What every command shares: the consoles, the one error path, and the options used by several commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from xe_forge.config import RunOptions, Settings, load_settings
from xe_forge.errors import ForgeError
from xe_forge.problem.kernel import spec_names_text
from xe_forge.terminal import make_console

console = make_console()
err_console = make_console(stderr=True)

KernelArg = Annotated[Path, typer.Argument(help="Kernel file: Model/ModelNew launching @triton.jit kernels, "
                                                "plus get_inputs() and get_init_inputs().")]
RefOpt = Annotated[Path | None, typer.Option("--reference", "-r", help="PyTorch reference (KernelBench problem "
                                             "file). Default: <stem>_pytorch.py beside the kernel, else the kernel "
                                             "itself (correctness is then relative to the input).")]
SpecOpt = Annotated[Path | None, typer.Option("--spec", "-s", help="Spec YAML (shapes, dtype, tolerances, unseen "
                                              "shapes; format: docs/SPEC.md, `xe-forge spec init` writes one). "
                                              f"Default: the first of {spec_names_text()} beside the kernel.")]
VariantOpt = Annotated[str | None, typer.Option("--variant", help="Spec variant to run (default: ci, else the "
                                                "first declared).")]
# Options whose default is a setting: None means "not given", and the XE_FORGE_* variable or the
# default in config.Settings decides (load_settings applies the flags that were given on top).
DeviceOpt = Annotated[str | None, typer.Option("--device", help="auto | xpu | cuda | cpu (auto: xpu, then cuda, "
                                               "then cpu). Default: XE_FORGE_DEVICE, else auto.")]
TargetOpt = Annotated[str | None, typer.Option("--target", help="Knowledge-base target: intel-xe2, intel-xe-hpc, "
                                               "intel-xe-hpg, nvidia-sm90 (default: XE_FORGE_TARGET, else detected; "
                                               "CPU: intel-xe2).")]
TimeoutOpt = Annotated[float | None, typer.Option("--timeout", help="Seconds before one candidate evaluation is "
                                                  f"killed. Default: XE_FORGE_TIMEOUT, else "
                                                  f"{RunOptions.model_fields['timeout'].default:g}.")]
TrialsOpt = Annotated[int | None, typer.Option("--trials", help="Random-input correctness trials. Default: "
                                               "XE_FORGE_TRIALS, else 3.")]
EngineOpt = Annotated[str | None, typer.Option("--engine", help="auto (LLM when a model is configured, else rules) | "
                                               "llm | rules (offline knowledge-base recipes). Default: "
                                               "XE_FORGE_ENGINE, else auto.")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Any LiteLLM model id (default: XE_FORGE_MODEL); "
                                              "XE_FORGE_API_BASE / XE_FORGE_API_KEY or the provider's variables.")]
ReasoningEffortOpt = Annotated[str | None, typer.Option("--reasoning-effort", help="none | minimal | low | medium | "
                                                       "high, passed to a reasoning model as is (default: "
                                                       "XE_FORGE_LLM_REASONING_EFFORT, else the model's own).")]
BudgetOpt = Annotated[str | None, typer.Option("--budget", help="Stop cleanly, with the best verified kernel so far, "
                                               "once the LLM has cost this much: dollars ($2, 0.5usd; LiteLLM's local "
                                               "prices), tokens (200k tokens), or once the run has taken this long "
                                               "(150s, 45m, 2h: no candidate starts that would end past it, and the "
                                               "final check has its time kept); none for no limit. Default: "
                                               "XE_FORGE_BUDGET, else 150s for the rules engine on a GPU, none "
                                               "otherwise.")]
MaxItersOpt = Annotated[int | None, typer.Option("--max-iters", help="CoVeR iterations per stage. Default: "
                                                 "XE_FORGE_MAX_ITERS, else 4.")]
ProfileOpt = Annotated[bool | None, typer.Option("--profile/--no-profile", help="Profile the kernel before each "
                                                 "stage (ncu on NVIDIA, VTune on Intel): the limiter steers the "
                                                 "next candidate and the report shows the roofline; without "
                                                 "counters the run continues unprofiled. Default: "
                                                 "XE_FORGE_PROFILE, else off.")]
PrecisionOpt = Annotated[str | None, typer.Option("--precision", help="keep | allow-tf32 | bf16 | fp16: the "
                                                  "precision policy for problems without a spec (docs/SPEC.md; "
                                                  "a spec's own wins). Default: XE_FORGE_PRECISION, else keep.")]
LowerBudgetOpt = Annotated[float | None, typer.Option("--lower-budget", help="Seconds of TorchInductor "
                                                     "autotuning per lowering; past it each kernel keeps the best "
                                                     "config found so far. Default: XE_FORGE_LOWER_BUDGET, else "
                                                     f"{RunOptions.model_fields['lower_budget'].default:g}.")]
StagesOpt = Annotated[str | None, typer.Option("--stages", help="Comma-separated stages to run, in order "
                                               "(default: planned from the analysis).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of tables.")]


def settings_from_flags(flags: dict[str, object]) -> Settings:
    """Settings with the run-option flags that were given on top (a command passes its `locals()`).

    A new run option is a field of config.RunOptions plus its option type here: every command that
    declares the parameter passes it through this one place.
    """
    return load_settings(**{k: v for k, v in flags.items() if k in RunOptions.model_fields})


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
