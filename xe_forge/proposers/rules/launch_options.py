"""launch-options (device_tuning): num_warps, num_stages, grf_mode, ... set at every launch site.

The recipe gives the values the knowledge base recommends for the target; options.legalize keeps
only those the option table accepts for this target and toolchain version (no grf_mode on NVIDIA,
GRF names by triton-xpu version, no 256-register GRF with more than 32 warps, power-of-two warps,
no keyword the installed version does not define), each drop giving the entry id that refuses it.
On Intel, grf.py then weighs a large GRF against the launch's tile (occupancy) and pins the
128-register mode where more than 32 warps would meet the toolchain's automatic large-GRF rebuild.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, append_items, int_value, literal
from xe_forge.proposers.rules.grf import Tile, pin_grf_for_many_warps, weigh_large_grf
from xe_forge.proposers.rules.kernels import Kernel
from xe_forge.proposers.rules.launches import LAUNCH_OPTIONS, Launch, launches_of, tile_value
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.options import known_options, legalize
from xe_forge.proposers.rules.roles import ROLE_KEYS, map_keys


def _literal_value(node: cst.BaseExpression) -> Any:
    if int_value(node) is not None:
        return int_value(node)
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    return node  # not a literal: never equal to a wanted value


def _dot_tile(ctx: RecipeContext, kernel: Kernel, launch: Launch) -> Tile | None:
    """The BLOCK_M x BLOCK_N x BLOCK_K this launch passes as literals; None when not all are known."""
    if not kernel.uses_dot:
        return None
    names = map_keys(kernel, list(ROLE_KEYS))
    try:
        values = [tile_value(ctx.module, launch, names[key]) if key in names else None for key in ROLE_KEYS]
    except NotApplicable:  # arguments splatted from *args / **config: the tile is not readable here
        return None
    if any(v is None or v.value is None for v in values):
        return None
    return Tile(*(v.value for v in values))  # type: ignore[union-attr]


def _launch_options(ctx: RecipeContext, kernel: Kernel, launch: Launch, legal: dict[str, Any],
                    present: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The options to write at one launch: the legal recipe options, weighed for this launch's tile."""
    notes: list[str] = []
    options, note = weigh_large_grf(legal, _dot_tile(ctx, kernel, launch), ctx.target, ctx.toolchain,
                                    present_warps=present.get("num_warps"))
    notes += [note] if note else []
    options, note = pin_grf_for_many_warps(options, present, ctx.target, ctx.toolchain)
    notes += [note] if note else []
    return options, notes


def _set_options(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[cst.CSTNode, Edit], str]:
    if kernel.autotune is not None:
        raise NotApplicable("kernel is wrapped in @triton.autotune; its configs own the launch options")
    known = known_options()
    wanted = {k: v for k, v in ctx.class_params(kernel).items() if k in known}
    if not wanted:
        raise NotApplicable(f"recipe params name no launch option ({', '.join(LAUNCH_OPTIONS[:6])})")
    legal, dropped = legalize(wanted, ctx.target, ctx.toolchain)
    if not legal:
        raise NotApplicable(f"no option is legal on {ctx.target} with {ctx.toolchain.name} {ctx.toolchain.version}: "
                            + "; ".join(dropped))
    edits: dict[cst.CSTNode, Edit] = {}
    notes: list[str] = []
    written: dict[str, Any] = {}
    for launch in launches_of(ctx.launches, kernel):
        present = launch.options()
        literals = {k: _literal_value(a.value) for k, a in present.items()}
        options, launch_notes = _launch_options(ctx, kernel, launch, legal, literals)
        notes += [n for n in launch_notes if n not in notes]
        merged = literals | options
        _, clash = legalize({k: v for k, v in merged.items() if not isinstance(v, cst.CSTNode)}, ctx.target, ctx.toolchain)
        if clash:
            raise NotApplicable(f"with the options already at the launch the result is illegal: {'; '.join(clash)}")
        new_args = []
        for key, value in options.items():
            if key in present:
                if _literal_value(present[key].value) != value:
                    edits[present[key].value] = literal(value)
            else:
                new_args.append(cst.Arg(keyword=cst.Name(key), value=literal(value),
                                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        if new_args:
            edits[launch.call] = lambda updated, extra=new_args: updated.with_changes(args=append_items(list(updated.args), extra))
        written |= options
    if not edits:
        raise NotApplicable(f"every launch of {kernel.name} already uses {written or legal}")
    shown = ", ".join(f"{k}={v!r}" for k, v in written.items())
    note = f" (dropped {'; '.join(dropped)})" if dropped else ""
    weighed = f"; {'; '.join(notes)}" if notes else ""
    return edits, f"set {shown} at the launches of {kernel.name}{note}{weighed}"


@register("launch-options")
def launch_options(ctx: RecipeContext) -> Applied:
    return per_kernel(ctx, _set_options, "set launch options")
