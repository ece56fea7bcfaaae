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
from xe_forge.proposers.rules.cst_tools import Edit, code_of, is_power_of_two, rewrite, walk
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
from xe_forge.proposers.rules.roles import map_keys
from xe_forge.proposers.rules.synth import conflicting_reader, drop_private_grid, rebuilt_grid, set_tile_edits


def heuristics_note(kernel: Kernel, chosen: list[str]) -> str:
    return (f"{', '.join(chosen)} {'is' if len(chosen) == 1 else 'are'} chosen by @triton.heuristics of "
            f"{kernel.name}, which overrides a value set at the launch")


def wanted_tiles(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[str, int], list[str]]:
    """The recipe's tile values as this kernel's constexprs (by name, else by role) and legal sizes."""
    params: dict[str, Any] = {k: v for k, v in ctx.class_params(kernel).items() if k.isupper()}
    if not params:
        raise NotApplicable("recipe params name no tile size")
    names = map_keys(kernel, list(params))
    present = {names[k]: v for k, v in params.items() if k in names}
    if not present:
        raise NotApplicable(
            f"tile sizes {', '.join(sorted(params))} are not constexpr parameters of {kernel.name} and no tile "
            "of it plays their role"
        )
    legal: dict[str, int] = {}
    notes: list[str] = []
    chosen = [k for k in present if kernel.chosen_by_heuristics(k)]
    if chosen:  # Heuristics.run overwrites a value passed at the launch; a grid written with it would not follow
        notes.append(heuristics_note(kernel, chosen))
        present = {k: v for k, v in present.items() if k not in chosen}
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


def _shared_with_other_kernels(ctx: RecipeContext, kernel: Kernel, value: TileValue) -> str | None:
    """Another kernel whose launch passes the same variable (changing the binding would change it too)."""
    if value.binding is None:
        return None
    for other in ctx.launches:
        if other.kernel is not kernel and any(
                isinstance(n, cst.Name) and n.value == value.binding.name for a in other.call.args for n in walk(a.value)):
            return other.kernel.name
    return None


def _in_place(ctx: RecipeContext, kernel: Kernel, launch: Launch, wanted: dict[str, int],
              notes: list[str]) -> tuple[dict[cst.CSTNode, Edit], dict[str, int]]:
    """Change the tiles where they are written (a literal, or a variable bound once to one) and keep
    the launch's own grid consistent; raises NotApplicable when that is not possible."""
    usable, why = launch_tiles(ctx, kernel, launch, list(wanted))
    tunable = [k for k in wanted if kernel.tunable(k)]
    blocked = [w for w in why if any(w.startswith(f"{k} ") for k in tunable)]
    notes += [w for w in why if w not in blocked]
    if blocked:
        raise NotApplicable("; ".join(blocked))
    change = {k: v for k, v in usable.items() if v.value != wanted[k]}
    for key, value in change.items():
        sharing = {k: wanted[k] for k, v in usable.items() if v.binding and value.binding and v.binding.name == value.binding.name}
        if len(set(sharing.values())) > 1:
            raise NotApplicable(f"{' and '.join(sharing)} share the variable {value.binding.name} but need different values")  # type: ignore[union-attr]
        other = _shared_with_other_kernels(ctx, kernel, value)
        if other is not None:
            raise NotApplicable(f"{key} comes from `{value.binding.name}`, which the launch of {other} also reads")  # type: ignore[union-attr]
    if not change:
        return {}, {}
    grid = ctx.grid(launch)
    owner = match_sites(grid, kernel, change, dict(wanted))
    edits: dict[cst.CSTNode, Edit] = {value.literal: cst.Integer(str(wanted[key])) for key, value in change.items()}  # type: ignore[misc]
    edits.update(_grid_edits(ctx, launch, grid, owner, wanted, list(change.values())))
    return edits, {k: wanted[k] for k in change}


def _at_launch(ctx: RecipeContext, kernel: Kernel, launch: Launch, wanted: dict[str, int],
               why: str) -> tuple[dict[cst.CSTNode, Edit], dict[str, int]]:
    """Pass the new tiles at this launch only, with a grid rebuilt from the kernel (synth.py)."""
    tiles = {k: v for k, v in wanted.items() if kernel.tunable(k)}
    if not tiles:
        raise NotApplicable(why)
    try:
        bound = launch.bound()
        for key in tiles:
            arg = bound.get(key)
            reader = conflicting_reader(ctx, launch, arg) if arg is not None else None
            if reader is not None:
                raise NotApplicable(f"{key} comes from `{code_of(arg.value)}`, which `{reader}` also reads")  # type: ignore[union-attr]
        current = {k: code_of(bound[k].value) for k in tiles if k in bound}
        tiles = {k: v for k, v in tiles.items() if current.get(k) != str(v)}
        if not tiles:
            return {}, {}
        edits = set_tile_edits(kernel, launch, tiles)
        if tiles.keys() & kernel.grid_tiles.keys():
            edits[launch.grid] = rebuilt_grid(ctx, kernel, launch, {k: str(v) for k, v in tiles.items()})
            edits.update(drop_private_grid(ctx, launch))
    except NotApplicable as err:
        raise NotApplicable(f"{why}; setting the tiles at the launch instead: {err.reason}") from None
    return edits, tiles


def _set_tiles(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[cst.CSTNode, Edit], str]:
    if kernel.autotune is not None:
        raise NotApplicable("kernel is wrapped in @triton.autotune; its configs own the tile sizes")
    wanted, notes = wanted_tiles(ctx, kernel)
    edits: dict[cst.CSTNode, Edit] = {}
    changed: dict[str, int] = {}
    at_launch = False
    for launch in launches_of(ctx.launches, kernel):
        try:
            launch_edits, launch_changed = _in_place(ctx, kernel, launch, wanted, notes)
        except NotApplicable as err:
            launch_edits, launch_changed = _at_launch(ctx, kernel, launch, wanted, err.reason)
            at_launch = at_launch or bool(launch_changed)
        edits.update(launch_edits)
        changed.update(launch_changed)
    if not edits:
        raise NotApplicable("; ".join(dict.fromkeys(notes)) or f"{kernel.name} already uses these tile sizes")
    shown = ", ".join(f"{k}={v}" for k, v in changed.items())
    grid_bound = sorted(changed.keys() & kernel.grid_tiles.keys())
    grid_note = f", grid kept consistent with {', '.join(grid_bound)}" if grid_bound else ""
    where = " at its launch (grid rebuilt from the kernel)" if at_launch and grid_bound else ""
    kept = [n for n in map_keys(kernel, [k for k in ctx.class_params(kernel) if k.isupper()]).values()
            if kernel.chosen_by_heuristics(n)]
    kept_note = f" ({heuristics_note(kernel, kept)}: left to it)" if kept else ""
    return edits, f"set {shown} for {kernel.name} ({kernel.problem_class}){where}{grid_note}{kept_note}"


@register("tile-sizes")
def tile_sizes(ctx: RecipeContext) -> Applied:
    return per_kernel(ctx, _set_tiles, "set tile sizes")
