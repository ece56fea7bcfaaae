"""GRF (register file) mode at an Intel launch: what a recipe asks for, weighed against occupancy.

Two knowledge-base facts decide here, each named in the candidate's rationale:

- Large GRF halves the hardware threads per vector engine (8 at 128 registers, 4 at 256:
  xpu-large-grf-halves-occupancy). A recipe's grf_mode '256' pays only when the tile would not fit
  in 128 registers; when it would, '128' keeps twice the threads in flight for the same tile.
- With more than 32 warps and the default GRF, a kernel that spills is rebuilt with 256 registers
  and then cannot launch on released toolchains (xpu-default-grf-retry-breaks-many-warps); an
  explicit 128-register mode stops the rebuild.

The register estimate is xe-forge's, not Intel's: the fp32 accumulator plus one K step of 16-bit
operand tiles, spread over the work-group's hardware threads (one per warp), in 64-byte registers.
A tile whose estimate stays within half of the 128-register file leaves the other half for
addresses, prefetches and the compiler's temporaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xe_forge.kb.loader import bundled_kb
from xe_forge.kb.options import OptionTable, bundled_table
from xe_forge.proposers.rules.targeting import ToolchainLike, as_toolchain, family

LARGE_GRF = ("256", "large")
SMALL_GRF = ("128", "small")
DEFAULT_NUM_WARPS = 4  # XPUOptions.num_warps
_OPERAND_BYTES = 2  # bf16/fp16, the DPAS case; the accumulator is fp32
_ACC_BYTES = 4


@dataclass(frozen=True)
class Tile:
    """A dot kernel's tile at one launch (BLOCK_M x BLOCK_N, K step BLOCK_K)."""

    m: int
    n: int
    k: int

    def registers_per_thread(self, num_warps: int, register_bytes: int) -> float:
        """Estimated registers one hardware thread holds for the accumulator and one K step's operands."""
        live = self.m * self.n * _ACC_BYTES + (self.m * self.k + self.k * self.n) * _OPERAND_BYTES
        return live / max(num_warps, 1) / register_bytes


def small_grf_name(target: str, toolchain: ToolchainLike, table: OptionTable | None = None) -> str | None:
    """The 128-register grf_mode name this toolchain accepts ('128' from 3.6, 'small' before)."""
    allowed = {str(v) for v in (table or bundled_table()).allowed_values("grf_mode", target, as_toolchain(toolchain)) or ()}
    return next((name for name in SMALL_GRF if name in allowed), None)


def _fact(key: str, target: str, toolchain: ToolchainLike) -> tuple[Any, str | None]:
    entry = bundled_kb().fact_entry(key, target, as_toolchain(toolchain))
    if entry is None:
        return None, None
    return next(f.value for f in entry.facts if f.key == key), entry.id


def weigh_large_grf(options: dict[str, Any], tile: Tile | None, target: str, toolchain: ToolchainLike,
                    present_warps: Any = None) -> tuple[dict[str, Any], str | None]:
    """`options` with a large grf_mode replaced by the small one when the tile fits, and why.

    Args:
        present_warps: num_warps already at the launch, used when `options` sets none.

    Unchanged (and no note) when the options ask for no large GRF, the tile is not known at the
    launch, or the knowledge base states no occupancy facts for this target.
    """
    if family(target) != "intel" or str(options.get("grf_mode")) not in LARGE_GRF or tile is None:
        return options, None
    small_regs, entry_id = _fact("xpu.small_grf_registers", target, toolchain)
    register_bytes, _ = _fact("xpu.grf_register_bytes", target, toolchain)
    threads_small, _ = _fact("xpu.threads_per_xve_small_grf", target, toolchain)
    threads_large, _ = _fact("xpu.threads_per_xve_large_grf", target, toolchain)
    small = small_grf_name(target, toolchain)
    if None in (small_regs, register_bytes, threads_small, threads_large, small):
        return options, None
    warps = options.get("num_warps", present_warps if present_warps is not None else DEFAULT_NUM_WARPS)
    if not isinstance(warps, int):
        return options, None
    need = tile.registers_per_thread(warps, register_bytes)
    shape = f"{tile.m}x{tile.n}x{tile.k} tile over {warps} warps"
    if need > small_regs / 2:
        return options, (f"kept grf_mode={options['grf_mode']!r}: the {shape} needs about {need:.0f} registers per "
                         f"thread, more than half of {small_regs} [{entry_id}]")
    return {**options, "grf_mode": small}, (
        f"grf_mode={small!r} instead of {options['grf_mode']!r}: the {shape} needs about {need:.0f} of {small_regs} "
        f"registers per thread, and large GRF would cut the hardware threads per XVE from {threads_small} to "
        f"{threads_large} [{entry_id}]")


def pin_grf_for_many_warps(options: dict[str, Any], present: dict[str, Any], target: str,
                           toolchain: ToolchainLike) -> tuple[dict[str, Any], str | None]:
    """`options` plus an explicit 128-register grf_mode when the launch (its `present` options merged
    with these) runs more than 32 warps on the default GRF, where the toolchain's automatic large-GRF
    rebuild ignores num_warps; unchanged otherwise."""
    merged = present | options
    warps = merged.get("num_warps")
    if family(target) != "intel" or not isinstance(warps, int) or warps <= 32:
        return options, None
    if str(merged.get("grf_mode", "default")) != "default":
        return options, None
    guarded, entry_id = _fact("triton_xpu.default_grf_retry_checks_num_warps", target, toolchain)
    small = small_grf_name(target, toolchain)
    if guarded is not False or small is None:
        return options, None
    return {**options, "grf_mode": small}, (
        f"grf_mode={small!r} with num_warps={warps}: on {toolchain.name} {toolchain.version} a spilling kernel on the "
        f"default GRF is rebuilt with 256 registers and then cannot launch more than 32 warps [{entry_id}]")
