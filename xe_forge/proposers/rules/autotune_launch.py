"""The launch side of autotuning: tiles leave the call, the grid becomes a function of META.

Where the source shows how the grid depends on each tile (a variable, a literal division, META),
the grid is rewritten in place (meta_grid.py) and host statements that only fed it go away. Where it
does not (a grid built in a helper, a tile computed on the host or passed into a launcher), the
launch gets a grid rebuilt from the kernel (synth.py). Either way every tile a config sets is taken
off the call, with every launch option, and later positional arguments become keywords.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext
from xe_forge.proposers.rules.cst_tools import Edit, walk
from xe_forge.proposers.rules.grid import grid_only_bindings, grid_var_private, match_sites, within
from xe_forge.proposers.rules.kernels import Kernel
from xe_forge.proposers.rules.launches import Launch, TileValue, tile_value, uses_of
from xe_forge.proposers.rules.meta_grid import plan_meta_grid
from xe_forge.proposers.rules.models import NotApplicable
from xe_forge.proposers.rules.synth import drop_private_grid, rebuilt_grid


def host_uses(ctx: RecipeContext, launch: Launch, value: TileValue) -> bool:
    """Whether host code other than the launch and its own grid reads the tile's variable."""
    if value.binding is None:
        return False
    scope = launch.scope or ctx.module
    grid = ctx.grid(launch)
    roots: list[cst.CSTNode] = [launch.call]
    if grid.binding is None or grid_var_private(grid, scope):  # a shared grid counts as other host code
        roots += [grid.root, *(b.value for b in grid_only_bindings(grid, scope, [value.arg.value]))]
    return any(not within(use, roots) for use in uses_of(scope, value.binding.name))


def strip_launch(launch: Launch, args: list[cst.Arg]) -> Edit:
    """Remove these arguments and every launch option from the call; positional arguments after a
    removed one become keywords so the rest still bind to the right parameters."""
    removed = {id(a) for a in args} | {id(a) for a in launch.options().values()}
    indices = [i for i, arg in enumerate(launch.call.args) if id(arg) in removed]
    params = launch.kernel.params
    first_gap = min((i for i in indices if launch.call.args[i].keyword is None), default=None)

    def rewrite(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        kept = []
        for i, arg in enumerate(updated.args):
            if i in indices:
                continue
            if first_gap is not None and i > first_gap and arg.keyword is None and i < len(params):
                arg = arg.with_changes(keyword=cst.Name(params[i]), equal=cst.AssignEqual(
                    cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            kept.append(arg)
        if kept and updated.args and kept[-1] is not updated.args[-1]:
            kept[-1] = kept[-1].with_changes(comma=updated.args[-1].comma)
        return updated.with_changes(args=kept)

    return rewrite


def dead_statements(scope: cst.CSTNode, bindings: list) -> dict[cst.CSTNode, Edit]:
    """The statement lines holding only these assignments, marked for removal."""
    targets = {id(b.assign) for b in bindings if not b.at_module}
    return {
        line: cst.RemovalSentinel.REMOVE
        for line in walk(scope)
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and id(line.body[0]) in targets
    }


def _in_place(ctx: RecipeContext, kernel: Kernel, launch: Launch, tiles: list[str], triton: str) -> dict[cst.CSTNode, Edit]:
    values = {k: tile_value(ctx.module, launch, k) for k in tiles}
    hidden = [k for k, v in values.items() if k in kernel.grid_tiles and (v is None or v.computed)]
    if hidden:
        raise NotApplicable(f"{', '.join(hidden)} tile(s) the grid but are not literals at the launch")
    grid = ctx.grid(launch)
    owner = match_sites(grid, kernel, values, {k: f"META[{k}]" for k in tiles})  # type: ignore[arg-type]
    scope = launch.scope or ctx.module
    plan = plan_meta_grid(grid, owner, values, triton, scope)  # type: ignore[arg-type]
    edits = dict(plan.edits)
    edits[launch.call] = strip_launch(launch, [v.arg for v in values.values() if v is not None])
    dead = plan.dead + [v.binding for v in values.values() if v and v.binding and not host_uses(ctx, launch, v)]
    edits.update(dead_statements(scope, dead))
    return edits


def _rebuilt(ctx: RecipeContext, kernel: Kernel, launch: Launch, tiles: list[str]) -> dict[cst.CSTNode, Edit]:
    bound = launch.bound()
    edits: dict[cst.CSTNode, Edit] = {launch.call: strip_launch(launch, [bound[k] for k in tiles if k in bound])}
    if set(tiles) & kernel.grid_tiles.keys():
        edits[launch.grid] = rebuilt_grid(ctx, kernel, launch, {k: f'META["{k}"]' for k in tiles}, meta="META")
        edits.update(drop_private_grid(ctx, launch))
    return edits


def launch_edits(ctx: RecipeContext, kernel: Kernel, launch: Launch, tiles: list[str], triton: str) -> tuple[
        dict[cst.CSTNode, Edit], bool]:
    """Edits for one launch of a kernel about to be autotuned over `tiles`; True when the grid had
    to be rebuilt from the kernel."""
    try:
        return _in_place(ctx, kernel, launch, tiles, triton), False
    except NotApplicable as err:
        try:
            return _rebuilt(ctx, kernel, launch, tiles), True
        except NotApplicable as second:
            raise NotApplicable(f"{err.reason}; rebuilding the grid instead: {second.reason}") from None
