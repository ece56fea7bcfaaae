"""Which launch options a device accepts, so a bad option is rejected before compiling.

The rules come from one place, the knowledge base's option table (`xe_forge.kb.options`: GRF mode
names per triton-xpu version, the keywords each backend version defines, warp limits, forbidden
combinations), each rejection naming its entry. A device adds only what it reads from itself at run
time: its sub-group count limit and its sub-group sizes, when it reports them.
"""

from __future__ import annotations

from typing import Any

from xe_forge.kb.options import OptionTable, bundled_table
from xe_forge.toolchain import OptionProblem, Toolchain


def _table(table: OptionTable | None) -> OptionTable:
    return table or bundled_table()  # read once per process, at the first check

# The compile-option keyword that sets the sub-group size, by triton-xpu version (renamed in 3.6).
SUB_GROUP_KEYWORDS = ("warp_size", "threads_per_warp")


def grf_modes(toolchain: Toolchain, target: str = "intel-xe2", table: OptionTable | None = None) -> tuple[str, ...]:
    """Legal grf_mode names for an installed triton-xpu (empty when the table lists none)."""
    allowed = _table(table).allowed_values("grf_mode", target, toolchain)
    return tuple(str(v) for v in allowed or ())


def warp_size_keyword(toolchain: Toolchain, target: str = "intel-xe2", table: OptionTable | None = None) -> str:
    """The sub-group size keyword this toolchain defines: `threads_per_warp` before triton-xpu 3.6."""
    table = _table(table)
    for keyword in SUB_GROUP_KEYWORDS:
        if not table.problems({keyword: 16}, target, toolchain):
            return keyword
    return "warp_size"


def device_limit_problems(options: dict[str, Any], *, max_warps: int | None,
                          warp_sizes: tuple[int, ...] | None) -> list[OptionProblem]:
    """What the device itself refuses (Triton's XPU validate_options reads the same two properties)."""
    problems: list[OptionProblem] = []
    warps = options.get("num_warps")
    if max_warps is not None and isinstance(warps, int) and warps > max_warps:
        problems.append(OptionProblem(option="num_warps", value=warps,
                                      message=f"num_warps={warps} exceeds the device limit of {max_warps}"))
    for keyword in SUB_GROUP_KEYWORDS:
        size = options.get(keyword)
        if warp_sizes is not None and size is not None and size not in warp_sizes:
            problems.append(OptionProblem(option=keyword, value=size,
                                          message=f"sub-group size {size} not supported (device has {list(warp_sizes)})"))
    return problems


def validate_options(options: dict[str, Any], toolchain: Toolchain, *, target: str, max_warps: int | None = None,
                     warp_sizes: tuple[int, ...] | None = None, table: OptionTable | None = None) -> list[OptionProblem]:
    """Every reason `target` with `toolchain` would reject these launch options (empty: all legal).

    Args:
        max_warps, warp_sizes: the device's own limits when it reports them (None: not known).
        table: the option table (default: the bundled knowledge base's).
    """
    problems = _table(table).problems(options, target, toolchain)
    named = {p.option for p in problems}
    problems += [p for p in device_limit_problems(options, max_warps=max_warps, warp_sizes=warp_sizes)
                 if p.option not in named]
    return problems
