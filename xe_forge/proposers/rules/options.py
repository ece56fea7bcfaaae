"""Making a recipe's launch options legal for a target and toolchain version, by the one option table.

An illegal option is not a slow kernel but a crash: upstream Triton raises KeyError on `grf_mode`,
triton-xpu >= 3.6 raises "Unknown grf_mode" on the old 'large'/'small' names, triton-xpu <= 3.5
silently ignores the new '256' (large GRF lost), and grf '256' with more than 32 warps is rejected.
The legality itself is the knowledge base's option table (`xe_forge.kb.options`); this module only
translates a name to its twin of another toolchain version where one exists (GRF names and the
sub-group keyword were renamed in triton-xpu 3.6) and drops what stays illegal, with the table's
reason and entry id.
"""

from __future__ import annotations

from typing import Any

from xe_forge.kb.options import OptionTable, bundled_table
from xe_forge.kb.schema import CONFIG_KEYWORDS  # triton.Config keywords; every other option goes in kwargs
from xe_forge.proposers.rules.grf import pin_grf_for_many_warps
from xe_forge.proposers.rules.launches import LAUNCH_OPTIONS
from xe_forge.proposers.rules.targeting import ToolchainLike, as_toolchain, family

__all__ = ["CONFIG_KEYWORDS", "ToolchainLike", "family", "known_options", "legalize", "legalize_config"]
# Renamed in triton-xpu 3.6 (IXB commit a9362d2544 for the GRF names; XPUOptions.warp_size at v3.6.0).
_VALUE_TWINS = {("grf_mode", "128"): "small", ("grf_mode", "256"): "large"}
_VALUE_TWINS |= {(option, old): new for (option, new), old in _VALUE_TWINS.items()}
_KEYWORD_TWINS = {"warp_size": "threads_per_warp", "threads_per_warp": "warp_size"}


def known_options(table: OptionTable | None = None) -> frozenset[str]:
    """Every option name a recipe may carry: those this proposer writes, and every launch keyword a
    backend version of the table defines (so a wrong-version one is refused with its entry id)."""
    return frozenset(LAUNCH_OPTIONS) | (table or bundled_table()).keywords


def _spellings(key: str, value: Any) -> list[tuple[str, Any]]:
    """The option as given, then as another triton-xpu version spells it."""
    twin_value = _VALUE_TWINS.get((key, str(value)))
    spellings = [(key, value)] + ([(key, twin_value)] if twin_value else [])
    if key in _KEYWORD_TWINS:
        spellings.append((_KEYWORD_TWINS[key], value))
    return spellings


def legalize(options: dict[str, Any], target: str, toolchain: ToolchainLike,
             table: OptionTable | None = None) -> tuple[dict[str, Any], list[str]]:
    """The legal subset of `options` for this target/toolchain (names translated), and why any was dropped.

    Each option is tried as given, then in its other version's spelling; one still illegal is dropped
    with the table's first reason. A forbidden combination is then repaired by dropping the option its
    entry names first (grf_mode before num_warps for the 32-warp large-GRF limit).
    """
    table = table or bundled_table()
    toolchain = as_toolchain(toolchain)
    legal: dict[str, Any] = {}
    dropped: list[str] = []
    known = known_options(table)
    for key, value in options.items():
        if key not in known:
            dropped.append(f"{key}={value!r} (not a launch option this proposer knows)")
            continue
        first_problem = None
        for name, spelled in _spellings(key, value):
            problems = table.problems({name: spelled}, target, toolchain)
            if not problems:
                legal[name] = spelled
                break
            first_problem = first_problem or problems[0]
        else:
            dropped.append(f"{key}={value!r} ({first_problem.message})")
    while problems := table.problems(legal, target, toolchain):
        problem = problems[0]
        dropped.append(f"{problem.option}={legal.pop(problem.option)!r} ({problem.message})")
    return legal, dropped


def legalize_config(config: dict[str, Any], tile_keys: set[str], target: str, toolchain: ToolchainLike) -> dict[str, Any] | None:
    """A config-space entry reduced to the kernel's tiles plus legal options; None when an option the
    config depends on is illegal here (a config is a combination: dropping half of it changes it)."""
    options = {k: v for k, v in config.items() if not k.isupper()}
    legal, dropped = legalize(options, target, toolchain)
    if any(not d.startswith(("grf_mode", "warp_size", "threads_per_warp", "maxnreg", "num_ctas")) for d in dropped):
        return None
    on_xpu = family(target) == "intel" and toolchain.name == "triton-xpu"
    if on_xpu and "grf_mode" in options and "grf_mode" not in legal:
        return None
    legal, _ = pin_grf_for_many_warps(legal, {}, target, toolchain)  # > 32 warps: no automatic 256-GRF rebuild
    tiles = {k: v for k, v in config.items() if k in tile_keys}
    return {**tiles, **legal}
