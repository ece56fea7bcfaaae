"""tile-sizes (device_tuning): constexpr tile sizes at the launch sites, grid kept consistent.

Tiles at the matrix-engine granularity (DPAS on Intel: M multiple of 8, N of 16, K of 16; wgmma on
Hopper) and large enough to amortise loads are where most GEMM speed comes from. A tile is changed
only when the source shows its old value (a literal, or a variable bound once to a literal) and the
kernel uses it to partition the grid or stride a loop; the grid is rewritten with it (grid.py) or
the change is refused.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, code_of, is_power_of_two, rewrite
from xe_forge.proposers.rules.grid import (
    Grid,
    Site,
    grid_only_bindings,
    grid_var_private,
    match_sites,
    within,
)
from xe_forge.proposers.rules.kernels import FREE_META, Kernel
from xe_forge.proposers.rules.launches import Launch, TileValue, launches_of, resolve, tile_value
from xe_forge.proposers.rules.models import Applied, NotApplicable


def wanted_tiles(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[str, int], list[str]]:
    """The recipe's tile values that are constexpr parameters of the kernel and legal sizes."""
    params: dict[str, Any] = {k: v for k, v in ctx.class_params(kernel).items() if k.isupper()}
    if not params:
        raise NotApplicable("recipe params name no tile size")
    present = {k: v for k, v in params.items() if k in kernel.constexprs}
    if not present:
        raise NotApplicable(
            f"tile sizes {', '.join(sorted(params))} are not constexpr parameters of {kernel.name}"
        )
    legal: dict[str, int] = {}
    notes: list[str] = []
    minimum = 16 if kernel.uses_dot else 1  # tl.dot needs every dimension >= 16
    for key, value in present.items():
        if key in FREE_META and isinstance(value, int) and value > 0:
            legal[key] = value
        elif is_power_of_two(value) and value >= minimum:
            legal[key] = value
        else:
            notes.append(f"{key}={value} is not a power of two >= {minimum}")
    if not legal:
        raise NotApplicable("; ".join(notes))
    return legal, notes


def _origin(ctx: RecipeContext, launch: Launch, value: TileValue) -> str:
    """Source of a computed tile value: the argument, or the assignment of the variable passed."""
    arg = value.arg.value
    if isinstance(arg, cst.Name):
        binding = resolve(ctx.module, launch.scope, arg.value)
        if binding is not None:
            return f"{arg.value} = {code_of(binding.value)}"
    return code_of(arg)


def launch_tiles(ctx: RecipeContext, kernel: Kernel, launch: Launch, keys: list[str]) -> tuple[dict[str, TileValue], list[str]]:
    """Tiles at this launch that can change, and why the others cannot."""
    usable: dict[str, TileValue] = {}
    notes: list[str] = []
    for key in keys:
        value = tile_value(ctx.module, launch, key)
        if value is None:
            notes.append(f"{key} is not passed at the launch")
        elif value.computed:
            notes.append(f"{key} is computed at the launch (`{_origin(ctx, launch, value)}`), not a literal")
        elif not kernel.tunable(key):
            notes.append(f"{key} neither partitions the grid nor strides a loop in {kernel.name}")
        else:
            usable[key] = value
    return usable, notes


def _grid_edits(ctx: RecipeContext, launch: Launch, grid: Grid, owner: dict[Site, str], wanted: dict[str, int],
                changing: list[TileValue]) -> dict[cst.CSTNode, Edit]:
    """New divisors in the grid. A grid variable another launch also uses gets a private copy at
    this launch; a shared intermediate of the grid is refused (changing it would break the other)."""
    site_edits: dict[cst.CSTNode, Edit] = {}
    for site, key in owner.items():
        site_edits[site.divisor] = cst.Integer(str(wanted[key]))
        if site.minus_one is not None:
            site_edits[site.minus_one] = cst.Integer(str(wanted[key] - 1))
    scope = launch.scope or ctx.module
    shared_root = grid.binding is not None and not grid_var_private(grid, scope)
    for value in changing:
        if shared_root and value.binding is not None and value.binding.name in grid.reads:
            raise NotApplicable(f"`{value.binding.name}` also sizes the grid `{grid.binding.name}` "  # type: ignore[union-attr]
                                "that another launch shares; changing it would break that launch")
    private = grid_only_bindings(grid, scope, [v.arg.value for v in changing])
    for site in owner:
        if within(site.node, [grid.root]):
            continue
        home = next(b for b in grid.closure if within(site.node, [b.value]))
        if shared_root or home not in private:
            raise NotApplicable(f"the grid's `{home.name}` is also used by other code; cannot change its tile here")
    if shared_root and site_edits:
        return {launch.grid: rewrite(grid.root, site_edits)}
    return site_edits


def _set_tiles(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[cst.CSTNode, Edit], str]:
    if kernel.autotune is not None:
        raise NotApplicable("kernel is wrapped in @triton.autotune; its configs own the tile sizes")
    wanted, notes = wanted_tiles(ctx, kernel)
    edits: dict[cst.CSTNode, Edit] = {}
    changed: dict[str, int] = {}
    grid_bound: set[str] = set()
    for launch in launches_of(ctx.launches, kernel):
        usable, why = launch_tiles(ctx, kernel, launch, list(wanted))
        notes += why
        change = {k: v for k, v in usable.items() if v.value != wanted[k]}
        shared = {v.binding.name for v in change.values() if v.binding}
        for name in shared:
            sharing = {k: wanted[k] for k, v in usable.items() if v.binding and v.binding.name == name}
            if len(set(sharing.values())) > 1:
                raise NotApplicable(f"{' and '.join(sharing)} share the variable {name} but need different values")
        if not change:
            continue
        grid = ctx.grid(launch)
        owner = match_sites(grid, kernel, change, dict(wanted))
        grid_bound |= change.keys() & kernel.grid_tiles.keys()
        for key, value in change.items():
            edits[value.literal] = cst.Integer(str(wanted[key]))  # type: ignore[index]
            changed[key] = wanted[key]
        edits.update(_grid_edits(ctx, launch, grid, owner, wanted, list(change.values())))
    if not edits:
        raise NotApplicable("; ".join(dict.fromkeys(notes)) or f"{kernel.name} already uses these tile sizes")
    shown = ", ".join(f"{k}={v}" for k, v in changed.items())
    grid_note = f", grid kept consistent with {', '.join(sorted(grid_bound))}" if grid_bound else ""
    return edits, f"set {shown} for {kernel.name} ({kernel.problem_class}){grid_note}"


@register("tile-sizes")
def tile_sizes(ctx: RecipeContext) -> Applied:
    return per_kernel(ctx, _set_tiles, "set tile sizes")
