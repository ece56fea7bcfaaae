"""group-swizzle (persistent): a 2D (pid_m, pid_n) tile grid flattened to 1D in GROUP_SIZE_M order.

Row-major launch order walks a whole row of output tiles before the next, so each B column panel is
re-read from DRAM once per row. Launching GROUP_SIZE_M rows of tiles column by column keeps those
panels in L2 while a group of programs uses them (Triton tutorial 03's "L2 cache optimisation").
The remapping is a bijection of the same tile set, so results are unchanged.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import (
    Edit,
    append_items,
    call_name,
    code_of,
    fresh_name,
    int_value,
    read_names,
    walk,
)
from xe_forge.proposers.rules.grid import Grid, grid_var_private
from xe_forge.proposers.rules.kernels import Kernel, program_id_axis
from xe_forge.proposers.rules.launches import Launch, launches_of, resolve, tile_value
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.synth import drop_private_grid, rebuilt_grid

_SWIZZLE = """\
{pid} = tl.program_id(0)
{num_m} = tl.cdiv({M}, {BM})
{num_n} = tl.cdiv({N}, {BN})
{in_group} = {G} * {num_n}
{group} = {pid} // {in_group}
{first} = {group} * {G}
{size} = tl.minimum({num_m} - {first}, {G})
{pid_m} = {first} + (({pid} % {in_group}) % {size})
{pid_n} = ({pid} % {in_group}) // {size}
"""


def _pid_statements(kernel: Kernel) -> dict[int, tuple[cst.SimpleStatementLine, str]]:
    """Axis -> (`name = tl.program_id(axis)` line at the kernel's top level, name)."""
    found: dict[int, tuple[cst.SimpleStatementLine, str]] = {}
    for line in kernel.node.body.body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            continue
        small = line.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            axis = program_id_axis(small.value)
            if axis is not None:
                found[axis] = (line, small.targets[0].target.value)
    calls = [n for n in walk(kernel.node.body) if isinstance(n, cst.Call)]
    if any((call_name(c) or "").endswith("num_programs") for c in calls):
        raise NotApplicable(f"{kernel.name} reads tl.num_programs; flattening the grid would change it")
    pid_calls = [c for c in calls if program_id_axis(c) is not None or (call_name(c) or "").endswith("program_id")]
    if sorted(found) != [0, 1] or len(pid_calls) != 2:
        raise NotApplicable(
            "grid is not 2D with `pid_m = tl.program_id(0)` and `pid_n = tl.program_id(1)` at the top of "
            f"{kernel.name}"
        )
    return found


def _axis_tile(kernel: Kernel, axis: int) -> str:
    tiles = [t for t, axes in kernel.grid_tiles.items() if axes == {axis}]
    if len(tiles) != 1:
        raise NotApplicable(f"cannot tell which tile of {kernel.name} partitions grid axis {axis}")
    return tiles[0]


def _axis_size(ctx: RecipeContext, launch: Launch, grid: Grid, axis: int, tile: str) -> str:
    """The kernel parameter whose cdiv by `tile` sizes grid axis `axis` at this launch."""
    element = grid.axes[axis]  # type: ignore[index]
    if isinstance(element, cst.Name):
        binding = resolve(ctx.module, launch.scope, element.value)
        element = binding.value if binding is not None else element
    if not (isinstance(element, cst.Call) and (call_name(element) or "").endswith("cdiv") and len(element.args) == 2):
        raise NotApplicable(f"grid axis {axis} is not triton.cdiv(size, {tile})")
    size, divisor = element.args[0].value, element.args[1].value
    value = tile_value(ctx.module, launch, tile)
    same_tile = (
        (value is not None and value.value is not None and int_value(divisor) == value.value)
        or (value is not None and value.binding is not None and read_names(divisor) == {value.binding.name})
        or (value is not None and code_of(divisor) == code_of(value.arg.value))
        or (grid.meta_name is not None and code_of(divisor).replace('"', "'") == f"{grid.meta_name}['{tile}']")
    )
    if not same_tile:
        raise NotApplicable(f"grid axis {axis} divides by `{code_of(divisor)}`, not by the tile {tile}")
    for param, arg in launch.bound().items():
        if code_of(arg.value) == code_of(size):
            return param
    raise NotApplicable(f"the size `{code_of(size)}` of grid axis {axis} is not passed to {launch.kernel.name}")


def _kernel_size(kernel: Kernel, tile: str) -> str:
    """The size parameter a grid tile blocks (`offs < M` / tl.cdiv(M, BLOCK_M) inside the kernel)."""
    sizes = sorted(kernel.tile_dims.get(tile, set()))
    if len(sizes) != 1:
        raise NotApplicable(f"cannot tell which size parameter {tile} tiles in {kernel.name}")
    return sizes[0]


def _rebuilt_flat(ctx: RecipeContext, kernel: Kernel, launch: Launch, why: str) -> dict[cst.CSTNode, Edit]:
    """A 1-D grid of cdiv(M, BM) * cdiv(N, BN) programs built from the kernel (synth.py)."""
    meta = {t: f'META["{t}"]' for t in kernel.grid_tiles} if kernel.autotune is not None else {}
    try:
        rebuilt = rebuilt_grid(ctx, kernel, launch, meta, meta="META" if meta else None)
    except NotApplicable as err:
        raise NotApplicable(f"{why}; rebuilding the grid instead: {err.reason}") from None
    body = rebuilt.body if isinstance(rebuilt, cst.Lambda) else rebuilt
    flat = _flat_grid_of([e.value for e in body.elements])  # type: ignore[attr-defined]
    return {launch.grid: rebuilt.with_changes(body=flat) if isinstance(rebuilt, cst.Lambda) else flat,
            **drop_private_grid(ctx, launch)}


def _flat_grid(grid: Grid) -> cst.BaseExpression:
    return _flat_grid_of(list(grid.axes or []))


def _flat_grid_of(axes: list[cst.BaseExpression]) -> cst.BaseExpression:
    a, b = (e if not isinstance(e, cst.BinaryOperation) else e.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            for e in axes)
    product = cst.BinaryOperation(a, cst.Multiply(cst.SimpleWhitespace(" "), cst.SimpleWhitespace(" ")), b)
    return cst.Tuple([cst.Element(product, comma=cst.Comma())])


def _swizzle(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[cst.CSTNode, Edit], str]:
    group = ctx.params.get("GROUP_SIZE_M", 8)
    if not isinstance(group, int) or group < 1:
        raise NotApplicable(f"GROUP_SIZE_M={group!r} is not a positive int")
    if "GROUP_SIZE_M" in kernel.params:
        raise NotApplicable(f"{kernel.name} already has a GROUP_SIZE_M parameter")
    pids = _pid_statements(kernel)
    tiles = [_axis_tile(kernel, 0), _axis_tile(kernel, 1)]
    edits: dict[cst.CSTNode, Edit] = {}
    sizes = [_kernel_size(kernel, tile) for tile in tiles]
    for launch in launches_of(ctx.launches, kernel):
        grid = ctx.grid(launch)
        try:
            if grid.axes is None or len(grid.axes) != 2:
                raise NotApplicable("grid is not 2D" if grid.axes is not None else
                                    "grid is not a tuple or a lambda returning one")
            found = [_axis_size(ctx, launch, grid, axis, tiles[axis]) for axis in (0, 1)]
            if found != sizes:
                raise NotApplicable(f"the grid sizes its axes by {', '.join(found)}, the kernel tiles {', '.join(sizes)}")
            flat = _flat_grid(grid)
            if grid.binding is None or grid_var_private(grid, launch.scope or ctx.module):
                edits[grid.lam.body if grid.lam is not None else grid.root] = flat
            else:  # another launch shares the grid variable: give this one its own flattened grid
                edits[launch.grid] = grid.lam.with_changes(body=flat) if grid.lam is not None else flat
        except NotApplicable as err:
            edits.update(_rebuilt_flat(ctx, kernel, launch, err.reason))
        extra = [cst.Arg(cst.Integer(str(group)), keyword=cst.Name("GROUP_SIZE_M"),
                         equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
        edits[launch.call] = lambda u, extra=extra: u.with_changes(args=append_items(list(u.args), extra))
    taken = {n.value for n in walk(kernel.node) if isinstance(n, cst.Name)}
    names = {key: fresh_name(key, taken) for key in ("pid", "num_pid_m", "num_pid_n", "num_pid_in_group",
                                                    "group_id", "first_pid_m", "group_size_m")}
    text = _SWIZZLE.format(
        pid=names["pid"], num_m=names["num_pid_m"], num_n=names["num_pid_n"], in_group=names["num_pid_in_group"],
        group=names["group_id"], first=names["first_pid_m"], size=names["group_size_m"], G="GROUP_SIZE_M",
        M=sizes[0], N=sizes[1], BM=tiles[0], BN=tiles[1], pid_m=pids[0][1], pid_n=pids[1][1],
    )
    lines = list(cst.parse_module(text).body)
    first, second = sorted((pids[0][0], pids[1][0]), key=kernel.node.body.body.index)
    edits[first] = cst.FlattenSentinel(lines)
    edits[second] = cst.RemovalSentinel.REMOVE
    after_default = kernel.node.params.params and kernel.node.params.params[-1].default is not None
    param = cst.Param(cst.Name("GROUP_SIZE_M"), annotation=cst.Annotation(cst.parse_expression("tl.constexpr")),
                      default=cst.Integer(str(group)) if after_default else None)  # parameters with defaults come last

    def add_param(fn: cst.CSTNode) -> cst.CSTNode:
        params = fn.params.with_changes(params=append_items(list(fn.params.params), [param]))  # type: ignore[attr-defined]
        return fn.with_changes(params=params)  # type: ignore[attr-defined]

    edits[kernel.node] = add_param
    return edits, f"flattened {kernel.name}'s 2D grid to 1D with GROUP_SIZE_M={group} ordering of its tiles"


@register("group-swizzle")
def group_swizzle(ctx: RecipeContext) -> Applied:
    return per_kernel(ctx, _swizzle, "swizzle the grid")
