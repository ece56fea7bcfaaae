"""A problem file's module constants (`batch_size = 128`, `H, W = 32, 32`), read from the source and
rebound in it, so the file can be imported again at other sizes with every derived constant
(`bias_shape = (out_channels, 1, 1)`) following. Parsing only: nothing here imports the file.
"""

from __future__ import annotations

import ast
from typing import Any


def module_constants(source: str) -> dict[str, Any]:
    """Module-level constants that feed get_inputs()/get_init_inputs(), directly or through others."""
    tree = ast.parse(source)
    values: dict[str, Any] = {}
    deps: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name, value in _bindings(target, node.value):
                    values[name] = value
                    deps[name] = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    used: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"):
            used |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    stack = list(used)
    while stack:
        for dep in deps.get(stack.pop(), ()):
            if dep not in used:
                used.add(dep)
                stack.append(dep)
    return {name: value for name, value in values.items()
            if name in used and isinstance(value, int | float) and not isinstance(value, bool)}


def _bindings(target: ast.AST, value: ast.AST) -> list[tuple[str, Any]]:
    """`a = 3`, `a = -3` and `D, H, W = 8, 16, 16` (and `h = w = 10` through repeated targets)."""
    if isinstance(target, ast.Name):
        literal = _literal(value)
        return [] if literal is None else [(target.id, literal)]
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [b for t, v in zip(target.elts, value.elts, strict=True) for b in _bindings(t, v)]
    return []


def _literal(value: ast.AST) -> Any:
    if isinstance(value, ast.Constant):
        return value.value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
        return -value.operand.value if isinstance(value.operand.value, int | float) else None
    return None


def rewrite_constants(source: str, overrides: dict[str, Any]) -> str:
    """The source with module-level constants rebound; `h = w = 10` becomes one assignment per name."""
    tree = ast.parse(source)
    body: list[ast.stmt] = []
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            body.append(node)
            continue
        for target in node.targets:
            body.append(ast.Assign(targets=[target], value=_rebound(target, node.value, overrides), lineno=node.lineno))
    tree.body = body
    return ast.unparse(ast.fix_missing_locations(tree))


def _rebound(target: ast.AST, value: ast.expr, overrides: dict[str, Any]) -> ast.expr:
    if isinstance(target, ast.Name) and target.id in overrides and _literal(value) is not None:
        return ast.Constant(overrides[target.id])
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return ast.Tuple(elts=[_rebound(t, v, overrides) for t, v in zip(target.elts, value.elts, strict=True)],
                         ctx=ast.Load())
    return value
