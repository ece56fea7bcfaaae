"""Which launch options are legal for a target and toolchain version, and how to name them.

An illegal option is not a slow kernel but a crash: upstream Triton raises KeyError on `grf_mode`,
triton-xpu >= 3.6 raises "Unknown grf_mode" on the old 'large'/'small' names, and grf '256' with
more than 32 warps is rejected (xpu-facts.md). The rules proposer therefore legalises every option it
emits here, translating names between toolchain versions where a twin exists and dropping the rest
with a note.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from packaging.version import Version

from xe_forge.kb.schema import CONFIG_KEYWORDS  # triton.Config keywords; every other option goes in kwargs
from xe_forge.proposers.rules.cst_tools import is_power_of_two

__all__ = ["CONFIG_KEYWORDS", "family", "grf_names", "legalize", "legalize_config", "max_warps"]
Family = Literal["intel", "nvidia", "any"]
_GRF_NEW_TO_OLD = {"128": "small", "256": "large"}
_GRF_OLD_TO_NEW = {v: k for k, v in _GRF_NEW_TO_OLD.items()}


class ToolchainLike(Protocol):
    name: str
    version: str


def family(target: str) -> Family:
    if target.startswith("intel"):
        return "intel"
    if target.startswith("nvidia"):
        return "nvidia"
    return "any"


def _version(toolchain: ToolchainLike) -> Version:
    from xe_forge.targets.base import parse_version  # lazily: the targets package is the lead's

    return parse_version(str(toolchain.version))


def _on_xpu(target: str, toolchain: ToolchainLike) -> bool:
    return family(target) == "intel" and toolchain.name == "triton-xpu"


def grf_names(toolchain: ToolchainLike) -> set[str]:
    """GRF mode names this triton-xpu accepts (renamed in 3.6; '512' from 3.7.2): the targets' table."""
    from xe_forge.targets.base import Toolchain
    from xe_forge.targets.options import grf_modes

    return set(grf_modes(Toolchain(name="triton-xpu", version=str(toolchain.version))))


def _legal_grf(value: Any, toolchain: ToolchainLike) -> str | None:
    names = grf_names(toolchain)
    text = str(value)
    if text in names:
        return text
    twin = _GRF_NEW_TO_OLD.get(text) or _GRF_OLD_TO_NEW.get(text)
    return twin if twin in names else None


def max_warps(target: str, options: dict[str, Any]) -> int:
    """Work-group limit: 1024 work-items; Intel DPAS kernels run 16-wide sub-groups, so 64 warps."""
    if family(target) == "intel" and options.get("warp_size", 16) != 32:
        return 64
    return 32


def legalize(options: dict[str, Any], target: str, toolchain: ToolchainLike) -> tuple[dict[str, Any], list[str]]:
    """The legal subset of `options` for this target/toolchain (names translated), and why any was dropped."""
    legal: dict[str, Any] = {}
    dropped: list[str] = []
    xpu = _on_xpu(target, toolchain)
    for key, value in options.items():
        if key == "num_warps":
            if is_power_of_two(value) and value <= max_warps(target, options):
                legal[key] = value
            else:
                dropped.append(f"num_warps={value} (must be a power of two <= {max_warps(target, options)})")
        elif key == "num_stages":
            if isinstance(value, int) and 0 <= value <= 8:
                legal[key] = value
            else:
                dropped.append(f"num_stages={value} (not an int in 0..8)")
        elif key == "grf_mode":
            name = _legal_grf(value, toolchain) if xpu else None
            if name is None:
                why = f"not a GRF mode of {toolchain.name} {toolchain.version}" if xpu else "Intel XPU only"
                dropped.append(f"grf_mode={value!r} ({why})")
            else:
                legal[key] = name
        elif key in ("warp_size", "threads_per_warp"):
            if xpu and value in (16, 32):
                legal["threads_per_warp" if _version(toolchain) < Version("3.6") else "warp_size"] = value
            else:
                dropped.append(f"{key}={value} ({'must be 16 or 32' if xpu else 'Intel XPU only'})")
        elif key in ("maxnreg", "num_ctas"):
            if family(target) == "nvidia" and isinstance(value, int) and value > 0:
                legal[key] = value
            else:
                dropped.append(f"{key}={value} (NVIDIA only)")
        else:
            dropped.append(f"{key}={value} (not a launch option this proposer knows)")
    big_grf = legal.get("grf_mode") in ("256", "512", "large")
    if big_grf and legal.get("num_warps", 4) > 32:
        dropped.append(f"grf_mode={legal.pop('grf_mode')!r} (cannot be used with num_warps > 32)")
    return legal, dropped


def legalize_config(config: dict[str, Any], tile_keys: set[str], target: str, toolchain: ToolchainLike) -> dict[str, Any] | None:
    """A config-space entry reduced to the kernel's tiles plus legal options; None when an option the
    config depends on is illegal here (a config is a combination: dropping half of it changes it)."""
    options = {k: v for k, v in config.items() if not k.isupper()}
    legal, dropped = legalize(options, target, toolchain)
    if any(not d.startswith(("grf_mode", "warp_size", "threads_per_warp", "maxnreg", "num_ctas")) for d in dropped):
        return None
    if family(target) == "intel" and "grf_mode" in options and "grf_mode" not in legal and _on_xpu(target, toolchain):
        return None
    tiles = {k: v for k, v in config.items() if k in tile_keys}
    return {**tiles, **legal}
