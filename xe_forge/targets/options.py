"""Which launch options a toolchain accepts, so a bad option is rejected before compiling.

The facts (shared/reference/xpu-facts.md): triton-xpu renamed GRF modes in 3.6 ('small'/'large' became
'128'/'256'), added '512' in 3.7.2, rejects '256'/'512' with more than 32 warps, and calls the
sub-group size `threads_per_warp` before 3.6 and `warp_size` from 3.6. Upstream Triton on NVIDIA
rejects every XPU-only keyword with "Keyword argument X was specified but unrecognised".
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from xe_forge.targets.base import OptionProblem, Toolchain

# Both option dataclasses (CUDAOptions, XPUOptions) have these; enable_fp_fusion and
# launch_cooperative_grid are XPUOptions fields too, and warp_size is a CUDAOptions field (always 32).
COMMON = {"num_warps", "num_stages", "num_ctas", "warp_size", "enable_fp_fusion", "launch_cooperative_grid"}
CUDA_ONLY = {"maxnreg", "launch_pdl"}
XPU_ONLY = {"grf_mode", "threads_per_warp", "generate_native_code", "advanced_path"}


def grf_modes(toolchain: Toolchain) -> tuple[str, ...]:
    """Legal grf_mode names for an installed triton-xpu."""
    version = toolchain.parsed
    if version < Version("3.6"):
        return ("default", "small", "large", "auto")
    if version < Version("3.7.2"):
        return ("default", "128", "256", "auto")
    return ("default", "128", "256", "512", "auto")


def warp_size_keyword(toolchain: Toolchain) -> str:
    return "threads_per_warp" if toolchain.parsed < Version("3.6") else "warp_size"


def validate_options(options: dict[str, Any], toolchain: Toolchain, *, max_warps: int | None = None,
                     warp_sizes: tuple[int, ...] = (16, 32)) -> list[OptionProblem]:
    """Every reason the toolchain would reject these launch options (empty list: all legal)."""
    problems: list[OptionProblem] = []

    def bad(option: str, message: str) -> None:
        problems.append(OptionProblem(option=option, value=options.get(option), message=message))

    xpu = toolchain.name == "triton-xpu"
    foreign = (CUDA_ONLY if xpu else XPU_ONLY) - COMMON
    for key in options:
        if key in foreign:
            where = "XPU" if not xpu else "CUDA"
            bad(key, f"Keyword argument {key} was specified but unrecognised ({where}-only option on {toolchain})")
    warps = options.get("num_warps")
    if warps is not None:
        if not isinstance(warps, int) or warps < 1 or warps & (warps - 1):
            bad("num_warps", f"num_warps must be a power of two, got {warps!r}")
        elif max_warps is not None and warps > max_warps:
            bad("num_warps", f"num_warps={warps} exceeds the device limit of {max_warps}")
    if not xpu and options.get("warp_size", 32) != 32:
        bad("warp_size", f"warp_size must be 32 on {toolchain} (got {options.get('warp_size')!r})")
    if xpu:
        grf = options.get("grf_mode")
        legal = grf_modes(toolchain)
        if grf is not None and str(grf) not in legal:
            bad("grf_mode", f"Unknown grf_mode '{grf}' for {toolchain} (legal: {', '.join(legal)})")
        if str(grf) in ("256", "512", "large") and isinstance(warps, int) and warps > 32:
            bad("grf_mode", f"grf_mode = {grf} cannot be used with num_warps > 32 (got {warps})")
        wrong_kw = "warp_size" if warp_size_keyword(toolchain) == "threads_per_warp" else "threads_per_warp"
        if wrong_kw in options:
            bad(wrong_kw, f"Keyword argument {wrong_kw} was specified but unrecognised on {toolchain} "
                          f"(use {warp_size_keyword(toolchain)})")
        size = options.get(warp_size_keyword(toolchain))
        if size is not None and size not in warp_sizes:
            bad(warp_size_keyword(toolchain), f"sub-group size {size} not supported (device has {warp_sizes})")
    return problems
