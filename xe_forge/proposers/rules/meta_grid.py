"""Turning a launch grid into `lambda META: (...)` for an autotuned kernel.

Once the tiles live in the autotune configs the host no longer knows them when it builds the grid;
Triton calls a grid function with the chosen config's meta-parameters instead. Every way the old
grid referred to a tile (its variable, a literal division, an intermediate such as
`num_tiles = triton.cdiv(M, BLOCK_M) * ...`) becomes `META['BLOCK_M']`, intermediates are inlined,
and host statements that only fed the grid are removed so no stale tile value is left behind.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from xe_forge.proposers.rules.cst_tools import Edit, fresh_name, walk
from xe_forge.proposers.rules.grid import Grid, Site, grid_only_bindings, grid_var_private, within
from xe_forge.proposers.rules.launches import Binding, TileValue


def _meta(meta: str, tile: str) -> cst.Subscript:
    return cst.Subscript(
        value=cst.Name(meta),
        slice=[cst.SubscriptElement(cst.Index(cst.SimpleString(f'"{tile}"')))],
    )


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.IfExp)) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


@dataclass
class MetaPlan:
    """What the grid rewrite touches: the new grid edits and the host bindings that become dead."""

    edits: dict[cst.CSTNode, Edit]
    dead: list[Binding]


class _ToMeta(cst.CSTTransformer):
    def __init__(self, meta: str, triton: str, owner: dict[Site, str], names: dict[str, cst.BaseExpression],
                 readable: set[int]) -> None:
        super().__init__()
        self.meta, self.triton, self.names, self.readable = meta, triton, names, readable
        self.sites = {id(site.node): (site, tile) for site, tile in owner.items()}

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
        if id(original) in self.sites:
            site, tile = self.sites[id(original)]
            plain_floor = isinstance(original, cst.BinaryOperation) and site.minus_one is None
            if plain_floor:
                return updated.with_changes(right=_meta(self.meta, tile))  # x // T keeps floor semantics
            if isinstance(updated, cst.Call):
                numerator = updated.args[0].value
            else:  # (M + T - 1) // T or (T - 1 + M) // T
                numerator = updated.left.right if original.left.left is site.minus_one else updated.left.left
            return cst.parse_expression(f"{self.triton}.cdiv(_, _)").with_changes(
                args=[cst.Arg(numerator, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                      cst.Arg(_meta(self.meta, tile))]
            ).with_changes(lpar=updated.lpar, rpar=updated.rpar)
        if isinstance(original, cst.Name) and id(original) in self.readable and original.value in self.names:
            return self.names[original.value]
        return updated


def plan_meta_grid(grid: Grid, owner: dict[Site, str], tiles: dict[str, TileValue], triton: str,
                   scope: cst.CSTNode) -> MetaPlan:
    """Edits that make the grid a function of META, and the bindings left dead by them."""
    meta = grid.meta_name or "META"
    tile_vars = {v.binding.name: k for k, v in tiles.items() if v.binding is not None}
    only = grid_only_bindings(grid, scope, [v.arg.value for v in tiles.values()])
    owned = {id(site.node) for site in owner}

    def depends(node: cst.CSTNode, seen: frozenset[str] = frozenset()) -> bool:
        for sub in walk(node):
            if id(sub) in owned or (isinstance(sub, cst.Name) and sub.value in tile_vars):
                return True
            if isinstance(sub, cst.Name) and sub.value not in seen:
                binding = next((b for b in only if b.name == sub.value), None)
                if binding is not None and depends(binding.value, seen | {sub.value}):
                    return True
        return False

    if not depends(grid.root):
        return MetaPlan({}, [])
    inline = [b for b in only if depends(b.value) and b is not grid.binding]
    readable = _readable_ids([grid.root, *(b.value for b in inline)])
    names: dict[str, cst.BaseExpression] = {name: _meta(meta, tile) for name, tile in tile_vars.items()}
    for binding in reversed(inline):  # innermost first: values may read later-inlined names
        names[binding.name] = _paren(binding.value.visit(_ToMeta(meta, triton, owner, names, readable)))
    rewritten = grid.root.visit(_ToMeta(meta, triton, owner, names, readable))
    new_grid = rewritten if grid.lam is not None else cst.Lambda(
        params=cst.Parameters(params=[cst.Param(cst.Name(meta))]), body=rewritten)
    if grid.binding is None and grid.lam is not None:  # a lambda written at the launch
        return MetaPlan({grid.launch.grid: new_grid}, list(inline))
    if grid.binding is not None and grid_var_private(grid, scope):
        return MetaPlan({grid.binding.value: new_grid}, list(inline))
    # A tuple written at the launch, or a grid variable another launch shares (leave that one
    # alone): hoist this launch's own grid function into a statement just before it.
    edits: dict[cst.CSTNode, Edit] = {}
    line = _statement_of(scope, grid.launch.call)
    if line is None:
        edits[grid.launch.grid] = new_grid
    else:
        name = fresh_name("grid", {n.value for n in walk(scope) if isinstance(n, cst.Name)})
        edits[grid.launch.grid] = cst.Name(name)
        assign = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], new_grid)])
        edits[line] = lambda updated: cst.FlattenSentinel([assign, updated])
    return MetaPlan(edits, list(inline) if grid.binding is None else [])


def _statement_of(scope: cst.CSTNode, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
    """The innermost simple statement line in `scope` that contains `node`."""
    lines = [n for n in walk(scope) if isinstance(n, cst.SimpleStatementLine) and within(node, [n])]
    return lines[-1] if lines else None


def _readable_ids(roots: list[cst.CSTNode]) -> set[int]:
    """Name nodes in read position (not attribute names, keywords or lambda parameters)."""
    skip: set[int] = set()
    for root in roots:
        for node in walk(root):
            if isinstance(node, cst.Attribute):
                skip.add(id(node.attr))
            elif isinstance(node, cst.Arg) and node.keyword is not None:
                skip.add(id(node.keyword))
            elif isinstance(node, cst.Param):
                skip.add(id(node.name))
    return {id(n) for root in roots for n in walk(root) if isinstance(n, cst.Name) and id(n) not in skip}
