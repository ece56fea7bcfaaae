"""Rewriting one launch when the source does not show how its tiles and grid were chosen.

Seeds pick tiles in many ways: module constants shared by several kernels, launcher arguments,
class attributes, tuple unpacking, constexpr defaults; and grids in helpers, lambdas or launchers.
When a tile cannot be changed where it is defined, it is set (or, for autotuning, removed) at this
one launch, and the launch gets a grid rebuilt from the kernel itself: a kernel that tiles its
size parameter P with `pid * T + tl.arange(0, T)` masked by `< P` needs exactly cdiv(P, T) programs
on that axis (the product over tiles, for a kernel that splits one program id into several tiles).
The tile's variable keeps its old value for every other reader, so this is refused when a reader
outside launches and grids (a host buffer sized by the tile) would disagree.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext
from xe_forge.proposers.rules.cst_tools import Edit, append_items, call_name, code_of, dotted, walk
from xe_forge.proposers.rules.grid import grid_var_private
from xe_forge.proposers.rules.kernels import Kernel, program_id_axis
from xe_forge.proposers.rules.launches import Launch
from xe_forge.proposers.rules.models import NotApplicable


def cdiv_name(module: cst.Module) -> str:
    """How this file can call triton.cdiv: `triton.cdiv`, `<alias>.cdiv`, or a `from triton import cdiv`."""
    for statement in module.body:
        for small in getattr(statement, "body", []) if isinstance(statement, cst.SimpleStatementLine) else []:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and alias.name.value == "triton":
                        return f"{alias.asname.name.value if alias.asname else 'triton'}.cdiv"  # type: ignore[union-attr]
            if isinstance(small, cst.ImportFrom) and dotted(small.module) == "triton" and not isinstance(
                    small.names, cst.ImportStar):
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and alias.name.value == "cdiv":
                        return alias.asname.name.value if alias.asname else "cdiv"  # type: ignore[union-attr]
    raise NotApplicable("the file neither imports triton nor `from triton import cdiv`, so a grid cannot be rebuilt")


def _axes(kernel: Kernel) -> int:
    calls = [n for n in walk(kernel.node.body) if isinstance(n, cst.Call)]
    if any((call_name(c) or "").endswith("num_programs") for c in calls):
        raise NotApplicable(f"{kernel.name} reads tl.num_programs, so its grid cannot be rebuilt")
    axes = [program_id_axis(c) for c in calls if (call_name(c) or "").endswith("program_id")]
    if None in axes:
        raise NotApplicable(f"{kernel.name} calls tl.program_id with a computed axis")
    return max(axes, default=-1) + 1  # type: ignore[type-var]


def tile_expression(kernel: Kernel, launch: Launch, tile: str, values: dict[str, str], meta: str | None) -> str:
    """The value of `tile` at this launch after the rewrite: the new one, or what is passed today;
    a tile @triton.heuristics chooses is known only to a grid lambda, as `meta[...]`."""
    if tile in values:
        return values[tile]
    if kernel.chosen_by_heuristics(tile):
        if meta is None:
            raise NotApplicable(f"{tile} of {kernel.name} is chosen by @triton.heuristics; only a grid lambda sees it")
        return f'{meta}["{tile}"]'
    arg = launch.bound().get(tile)
    if arg is not None:
        return code_of(arg.value)
    param = next((p for p in kernel.node.params.params if p.name.value == tile), None)
    if param is not None and param.default is not None:
        return code_of(param.default)
    raise NotApplicable(f"{tile} is neither passed at the launch of {kernel.name} nor has a default")


def rebuilt_grid(ctx: RecipeContext, kernel: Kernel, launch: Launch, values: dict[str, str], *,
                 meta: str | None = None) -> cst.BaseExpression:
    """The launch grid derived from the kernel: per axis, the product of cdiv(size, tile) over the
    tiles that partition it; an axis no tile partitions keeps the grid's own expression for it."""
    cdiv = cdiv_name(ctx.module)
    bound = launch.bound()
    original = ctx.grid(launch)
    if meta is None and original.lam is not None and any(
            kernel.chosen_by_heuristics(t) and t not in values for t in kernel.grid_tiles):
        meta = original.meta_name or "meta"  # keep the lambda: the grid must read the decorator's tile
    meta_name = (original.meta_name or meta) if meta is not None else None
    elements: list[str] = []
    for axis in range(_axes(kernel)):
        tiles = sorted(t for t, axes in kernel.grid_tiles.items() if axis in axes)
        if not tiles:
            if original.axes is None or len(original.axes) <= axis:
                raise NotApplicable(f"grid axis {axis} of {kernel.name} is not tiled by a constexpr and the launch's "
                                    f"grid `{code_of(launch.grid)}` does not show it")
            if original.lam is not None and meta is None:
                raise NotApplicable(f"grid axis {axis} of {kernel.name} is `{code_of(original.axes[axis])}` inside "
                                    "a lambda; it cannot be reused outside one")
            elements.append(code_of(original.axes[axis]))
            continue
        factors = []
        for tile in tiles:
            sizes = sorted(kernel.tile_dims.get(tile, set()))
            if len(sizes) != 1 or sizes[0] not in bound:
                why = f"{', '.join(sizes)}" if sizes else "no size parameter"
                raise NotApplicable(f"{kernel.name} tiles grid axis {axis} with {tile}, which blocks {why}; cannot "
                                    "tell how many programs it needs")
            tile_value = tile_expression(kernel, launch, tile, values, meta_name)
            factors.append(f"{cdiv}({code_of(bound[sizes[0]].value)}, {tile_value})")
        elements.append(" * ".join(factors))
    body = "(" + ", ".join(elements) + ("," if len(elements) == 1 else "") + ")"
    if meta is not None:
        body = f"lambda {meta_name}: {body}"
    return cst.parse_expression(body)


def _reader_roots(ctx: RecipeContext) -> set[int]:
    """Reads that do not care about a tile's value: inside a grid expression, or a tile argument of a
    launch (another kernel keeps its own tile, consistently with its own grid)."""
    roots: list[cst.CSTNode] = []
    for launch in ctx.launches:
        roots.append(ctx.grid(launch).root)
        constexprs = set(launch.kernel.constexprs)
        roots += [arg.value for name, arg in launch.bound().items() if name in constexprs] if not any(
            a.star for a in launch.call.args) else []
    return {id(n) for root in roots for n in walk(root)}


def _host_lines(ctx: RecipeContext, root: cst.CSTNode) -> list[cst.SimpleStatementLine]:
    kernels = {id(k.node) for k in ctx.kernels.values()}
    lines: list[cst.SimpleStatementLine] = []

    def visit(node: cst.CSTNode) -> None:
        if id(node) in kernels:
            return
        if isinstance(node, cst.SimpleStatementLine):
            lines.append(node)
        for child in node.children:
            visit(child)

    visit(root)
    return lines


def _defining_scope(ctx: RecipeContext, launch: Launch, name: str) -> cst.CSTNode:
    """The innermost function around the launch that binds `name` (a parameter or an assignment);
    the module when none does (a module constant)."""
    enclosing = [f for f in walk(ctx.module) if isinstance(f, cst.FunctionDef)
                 and any(n is launch.call for n in walk(f))]
    for fn in reversed(enclosing):
        params = {p.name.value for p in (*fn.params.params, *fn.params.kwonly_params)}
        assigned = {n.value for node in walk(fn.body) if isinstance(node, cst.Assign)
                    for t in node.targets for n in walk(t.target) if isinstance(n, cst.Name)}
        if name in params or name in assigned:
            return fn
    return ctx.module


def _read_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Names and attributes in read position (not keywords of a call, not attribute names)."""
    skip = {id(n.keyword) for n in walk(node) if isinstance(n, cst.Arg) and n.keyword is not None}
    skip |= {id(n.attr) for n in walk(node) if isinstance(n, cst.Attribute)}
    return [n for n in walk(node) if isinstance(n, cst.Name | cst.Attribute) and id(n) not in skip]


def conflicting_reader(ctx: RecipeContext, launch: Launch, arg: cst.Arg) -> str | None:
    """A host statement that reads the variable passed in `arg`, or a value computed from it, for
    something other than a grid (a buffer sized by the tile, a count passed to another kernel):
    changing the tile at the launch alone would leave that statement with the old value."""
    value = arg.value
    origin = value.value if isinstance(value, cst.Name) else None
    attr = value.attr.value if isinstance(value, cst.Attribute) else None
    if origin is None and attr is None:
        return None
    scope = _defining_scope(ctx, launch, origin) if origin else ctx.module
    free = _reader_roots(ctx)
    statements = [small for line in _host_lines(ctx, scope) for small in line.body]
    carriers = {origin} if origin else set()

    def reads(small: cst.CSTNode) -> list[cst.CSTNode]:
        node = small.value if isinstance(small, cst.Assign) else small
        return [n for n in _read_nodes(node) if id(n) not in free and (
            (isinstance(n, cst.Name) and n.value in carriers) or (isinstance(n, cst.Attribute) and n.attr.value == attr))]

    def binds(small: cst.CSTNode) -> set[str]:
        return {n.value for t in getattr(small, "targets", []) for n in walk(t.target) if isinstance(n, cst.Name)}

    derived: dict[int, set[str]] = {}
    while True:  # names computed from the tile carry it too
        new = {id(s): binds(s) for s in statements if isinstance(s, cst.Assign) and id(s) not in derived and reads(s)}
        if not new:
            break
        derived |= new
        carriers |= set().union(*new.values())
    grid_only = carriers - {origin}
    while True:  # the derived names read only by grids and by assignments to other such names
        unsafe = {n.value for s in statements if not (id(s) in derived and derived[id(s)] <= grid_only)
                  for n in reads(s) if isinstance(n, cst.Name)}
        if not unsafe & grid_only:
            break
        grid_only -= unsafe
    offending = [s for s in statements if reads(s) and not (id(s) in derived and derived[id(s)] <= grid_only)]
    if not offending:
        return None
    return code_of(next((s for s in offending if not isinstance(s, cst.Assign)), offending[-1]))


def set_tile_edits(kernel: Kernel, launch: Launch, values: dict[str, int]) -> dict[cst.CSTNode, Edit]:
    """Edits that pass each tile's new literal at this launch (a keyword where it was not passed)."""
    edits: dict[cst.CSTNode, Edit] = {}
    bound = launch.bound()
    extra = []
    for tile, value in values.items():
        if tile in bound:
            edits[bound[tile].value] = cst.Integer(str(value))
        else:
            extra.append(cst.Arg(cst.Integer(str(value)), keyword=cst.Name(tile),
                                 equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    if extra:
        edits[launch.call] = lambda u, extra=extra: u.with_changes(args=append_items(list(u.args), extra))
    return edits


def drop_private_grid(ctx: RecipeContext, launch: Launch) -> dict[cst.CSTNode, Edit]:
    """Remove `grid = ...` when only this launch read it and its grid was just rebuilt."""
    grid = ctx.grid(launch)
    scope = launch.scope or ctx.module
    if grid.binding is None or not grid_var_private(grid, scope):
        return {}
    return {line: cst.RemovalSentinel.REMOVE for line in walk(scope)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and line.body[0] is grid.binding.assign}
