"""How a kernel file is read before any recipe looks at it: equivalent respellings of two idioms
that TorchInductor's kernels (and so every packaged port, proposers/lower) use and the recipes'
analysis does not.

- `kernel[a, 1, 1](...)`: the packaged forward launches with the grid as several subscripts (what
  `ast.unparse` makes of `kernel[(a, 1, 1)]`); the transforms edit a launch's grid as one
  expression, so it becomes the tuple it means.
- `BLOCK_M: tl.constexpr = 128` in a kernel's body (Inductor's GEMM and convolution templates fix
  their tiles there): the recipes tune tiles that are constexpr parameters set at the launch, so an
  integer body constexpr becomes a parameter that every launch passes (`BLOCK_M=128`).

Both keep the function computed exactly; a file with neither idiom is returned as it is. A
template that promised its tile divides a size (`EVEN_K: tl.constexpr = True`: no K mask) keeps its
tiles in the body: another tile would break that promise.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.cst_tools import Edit, append_items, apply_edits, dotted, int_value, walk
from xe_forge.proposers.rules.kernels import find_kernels
from xe_forge.proposers.rules.launches import find_launches


class _TupleGrids(cst.CSTTransformer):
    """`kernel[a, b, c](...)` -> `kernel[(a, b, c)](...)` for the file's kernels."""

    def __init__(self, kernels: set[str]) -> None:
        super().__init__()
        self._kernels = kernels

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:  # noqa: N802 - libcst hook
        func = updated_node.func
        if not _split_grid(func, self._kernels):
            return updated_node
        axes = [cst.Element(e.slice.value) for e in func.slice]  # type: ignore[union-attr]
        grid = cst.Tuple(axes, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated_node.with_changes(func=func.with_changes(slice=[cst.SubscriptElement(cst.Index(grid))]))


def _split_grid(func: cst.BaseExpression, kernels: set[str]) -> bool:
    return (isinstance(func, cst.Subscript) and dotted(func.value) in kernels and len(func.slice) > 1
            and all(isinstance(e.slice, cst.Index) and e.slice.star is None for e in func.slice))


def tuple_grids(module: cst.Module) -> cst.Module:
    """Every launch's grid as one subscript expression."""
    kernels = set(find_kernels(module))
    if not any(isinstance(n, cst.Call) and _split_grid(n.func, kernels) for n in walk(module)):
        return module
    return module.visit(_TupleGrids(kernels))


def _body_constexprs(fn: cst.FunctionDef) -> dict[str, tuple[cst.SimpleStatementLine, int | bool]]:
    """Top-level `NAME: tl.constexpr = <int or bool literal>` lines of a kernel body, by name."""
    found: dict[str, tuple[cst.SimpleStatementLine, int | bool]] = {}
    for line in fn.body.body:
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
                and isinstance(line.body[0], cst.AnnAssign)):
            continue
        stmt = line.body[0]
        if not (isinstance(stmt.target, cst.Name) and stmt.value is not None
                and (dotted(stmt.annotation.annotation) or "").endswith("constexpr")):
            continue
        value = int_value(stmt.value)
        if value is None and isinstance(stmt.value, cst.Name) and stmt.value.value in ("True", "False"):
            value = stmt.value.value == "True"
        if value is not None:
            found[stmt.target.value] = (line, value)
    return found


def lift_constexprs(module: cst.Module) -> cst.Module:
    """Integer body constexprs of launched kernels as constexpr parameters passed at every launch."""
    kernels = find_kernels(module)
    launches = find_launches(module, kernels)
    edits: dict[cst.CSTNode, Edit] = {}
    for kernel in kernels.values():
        mine = [launch for launch in launches if launch.kernel is kernel]
        fixed = _body_constexprs(kernel.node)
        lifted = {name: value for name, (_, value) in fixed.items()
                  if type(value) is int and name not in kernel.params}
        promised = any(name.startswith("EVEN_") and value is True for name, (_, value) in fixed.items())
        if not lifted or not mine or promised or kernel.autotune is not None or kernel.has_heuristics:
            continue
        params = kernel.node.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg \
                or any(p.default is not None for p in params.params):
            continue
        if any(a.star or (a.keyword and a.keyword.value in lifted) for launch in mine for a in launch.call.args):
            continue
        new_params = [cst.Param(cst.Name(name), annotation=cst.Annotation(cst.parse_expression("tl.constexpr")))
                      for name in lifted]
        body = [s for s in kernel.node.body.body if not any(s is fixed[name][0] for name in lifted)]
        edits[kernel.node] = _lifted_def(new_params, body)
        for launch in mine:
            new_args = [cst.Arg(cst.Integer(str(value)), keyword=cst.Name(name),
                                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                      whitespace_after=cst.SimpleWhitespace("")))
                        for name, value in lifted.items()]
            edits[launch.call] = _with_args(new_args)
    return cst.parse_module(apply_edits(module, edits)) if edits else module


def _lifted_def(new_params: list[cst.Param], body: list[cst.BaseStatement]) -> Edit:
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        params = node.params.with_changes(params=append_items(list(node.params.params), new_params))
        return node.with_changes(params=params, body=node.body.with_changes(body=body))
    return edit


def _with_args(new_args: list[cst.Arg]) -> Edit:
    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return node.with_changes(args=append_items(list(node.args), new_args))
    return edit


def normalized(module: cst.Module) -> cst.Module:
    """The module as the recipes read it (both respellings above)."""
    return lift_constexprs(tuple_grids(module))
