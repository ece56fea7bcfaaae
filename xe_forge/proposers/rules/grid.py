"""The launch grid: its shape, how it depends on the tile sizes, and how to keep it consistent.

A kernel tiled with `pid_m * BLOCK_M` must be launched with `cdiv(M, BLOCK_M)` programs on that axis:
change the tile without changing the grid and rows go missing (grid too small) or programs run past
the end (masked, but wasted). The grid states the tile in one of four ways, all handled here:
a variable holding the tile (`cdiv(M, BLOCK_M)`), `META['BLOCK_M']` in a lambda, a literal division
(`triton.cdiv(M, 32)`, `M // 32`, `(M + 31) // 32`, `(31 + M) // 32`), or not at all (then we refuse to change it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from xe_forge.proposers.rules.cst_tools import call_name, code_of, int_value, read_names, walk
from xe_forge.proposers.rules.kernels import Kernel
from xe_forge.proposers.rules.launches import Binding, Launch, TileValue, grid_closure, resolve, uses_of
from xe_forge.proposers.rules.models import NotApplicable


@dataclass(eq=False)
class Site:
    """A literal division in the grid: `node` computes ceil-or-floor(x / value)."""

    node: cst.BaseExpression
    divisor: cst.Integer
    minus_one: cst.Integer | None
    value: int
    numerator: cst.BaseExpression
    axes: set[int] = field(default_factory=set)


@dataclass
class Grid:
    """A launch's grid as far as the source says."""

    launch: Launch
    root: cst.BaseExpression
    """The grid expression after following a grid variable to its value."""
    binding: Binding | None
    """The `grid = ...` assignment when the launch passes a variable."""
    lam: cst.Lambda | None
    axes: list[cst.BaseExpression] | None
    """Elements of the grid tuple (of the lambda body for a lambda); None when not a tuple."""
    closure: list[Binding]
    sites: list[Site]
    reads: set[str]
    meta_keys: set[str]

    @property
    def meta_name(self) -> str | None:
        if self.lam is None or not self.lam.params.params:
            return None
        return self.lam.params.params[0].name.value


def _sites_in(node: cst.CSTNode) -> list[Site]:
    sites: list[Site] = []
    for sub in walk(node):
        if isinstance(sub, cst.Call) and (call_name(sub) or "").endswith("cdiv") and len(sub.args) == 2:
            value = int_value(sub.args[1].value)
            if value is not None:
                sites.append(Site(sub, sub.args[1].value, None, value, sub.args[0].value))  # type: ignore[arg-type]
        elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.FloorDivide):
            value = int_value(sub.right)
            if value is None:
                continue
            left, minus_one = sub.left, None
            if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Add):
                if int_value(left.right) == value - 1:
                    minus_one, left = left.right, left.left
                elif int_value(left.left) == value - 1:  # `(63 + M) // 64`, as Inductor writes it
                    minus_one, left = left.left, left.right
            sites.append(Site(sub, sub.right, minus_one, value, left))  # type: ignore[arg-type]
    return sites


def _meta_keys(node: cst.CSTNode, meta: str | None) -> set[str]:
    keys: set[str] = set()
    if meta is None:
        return keys
    for sub in walk(node):
        if isinstance(sub, cst.Subscript) and isinstance(sub.value, cst.Name) and sub.value.value == meta:
            index = sub.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                keys.add(index.value.evaluated_value)  # type: ignore[arg-type]
    return keys


def analyze_grid(module: cst.Module, launch: Launch) -> Grid:
    """Follow the grid to a tuple or lambda, collect its literal divisions and the names it reads."""
    root, binding = launch.grid, None
    if isinstance(root, cst.Name):
        binding = resolve(module, launch.scope, root.value)
        if binding is not None:
            root = binding.value
    lam = root if isinstance(root, cst.Lambda) else None
    body = lam.body if lam is not None else root
    axes = [e.value for e in body.elements] if isinstance(body, cst.Tuple) else None
    closure = grid_closure(module, launch, root)
    sites = _sites_in(root) + [s for b in closure for s in _sites_in(b.value)]
    reads = read_names(root) | {n for b in closure for n in read_names(b.value)}
    grid = Grid(launch, root, binding, lam, axes, closure, sites, reads, set())
    grid.meta_keys = _meta_keys(root, grid.meta_name)
    _assign_axes(grid)
    return grid


def _assign_axes(grid: Grid) -> None:
    """Tag every site with the grid axes whose expression (through the closure) contains it."""
    if grid.axes is None:
        return
    values = {b.name: b.value for b in grid.closure}
    for axis, element in enumerate(grid.axes):
        seen: set[str] = set()
        pending = [element]
        while pending:
            node = pending.pop()
            for site in grid.sites:
                if any(sub is site.node for sub in walk(node)):
                    site.axes.add(axis)
            for name in read_names(node) - seen:
                seen.add(name)
                if name in values:
                    pending.append(values[name])


def match_sites(grid: Grid, kernel: Kernel, tiles: dict[str, TileValue], new: dict[str, object]) -> dict[Site, str]:
    """Which literal division belongs to which tile, refusing when the grid hides a tile.

    `tiles` are the tiles about to change at this launch, `new` their new values (an int, or a
    marker for autotune). A grid-bound tile must be visible in the grid: by its variable, by
    META[...], or by a literal division equal to its old value. A literal that could be two tiles
    with different new values is resolved by the kernel's program-id axes or refused.
    """
    grid_bound = {t: v for t, v in tiles.items() if t in kernel.grid_tiles and not v.computed}
    owner: dict[Site, str] = {}
    covered: set[str] = set()
    for site in grid.sites:
        candidates = [t for t, v in grid_bound.items() if v.value == site.value]
        if len({repr(new[t]) for t in candidates}) > 1:
            candidates = [t for t in candidates if kernel.grid_tiles[t] & site.axes] or candidates
        if len({repr(new[t]) for t in candidates}) > 1:
            sizes = {p for p, a in grid.launch.bound().items() if code_of(a.value) == code_of(site.numerator)}
            candidates = [t for t in candidates if kernel.tile_dims.get(t, set()) & sizes] or candidates
            if len({repr(new[t]) for t in candidates}) > 1:
                raise NotApplicable(
                    f"the grid divides by {site.value}, which is the old value of "
                    f"{' and '.join(candidates)}; cannot tell which tile it stands for"
                )
        if candidates:
            owner[site] = candidates[0]  # all remaining candidates get the same new value
            covered.update(candidates)
    for tile, value in grid_bound.items():
        visible = (
            (value.binding is not None and value.binding.name in grid.reads)
            or tile in grid.meta_keys
            or tile in covered
        )
        if not visible:
            raise NotApplicable(
                f"{kernel.name} tiles its grid with {tile} but the grid at the launch does not show "
                f"how it depends on {tile}; cannot keep the grid consistent"
            )
    known = {id(s.divisor) for s in owner} | {id(s.minus_one) for s in owner}
    known |= {id(v.literal) for v in tiles.values() if v.literal is not None}
    stray = {
        value.value
        for value in grid_bound.values()
        for node in [grid.root, *(b.value for b in grid.closure if int_value(b.value) is None)]
        for sub in walk(node)
        if int_value(sub) == value.value and id(sub) not in known
    }
    if stray:
        raise NotApplicable(
            f"the grid uses the literal {sorted(stray)[0]} outside a recognised division "
            "(triton.cdiv(x, T), x // T, (x + T - 1) // T); cannot keep it consistent"
        )
    return owner


def within(node: cst.CSTNode, roots: list[cst.CSTNode]) -> bool:
    """Whether `node` (by identity) lies inside one of `roots`."""
    return any(node is sub for root in roots for sub in walk(root))


def grid_only_bindings(grid: Grid, scope: cst.CSTNode, extra_roots: list[cst.CSTNode]) -> list[Binding]:
    """Local bindings in the grid's closure that nothing but the grid (and the launch) reads."""
    roots: list[cst.CSTNode] = [grid.root, grid.launch.grid, *extra_roots]
    only: list[Binding] = []
    changed = True
    while changed:
        changed = False
        for binding in grid.closure:
            if binding in only or binding.at_module:
                continue
            if all(within(use, roots + [b.value for b in only]) for use in uses_of(scope, binding.name)):
                only.append(binding)
                changed = True
    return only


def grid_var_private(grid: Grid, scope: cst.CSTNode) -> bool:
    """True when the launch's grid is a local variable nothing else reads (safe to rewrite in place)."""
    return grid.binding is not None and not grid.binding.at_module and all(
        within(use, [grid.launch.grid]) for use in uses_of(scope, grid.binding.name)
    )
