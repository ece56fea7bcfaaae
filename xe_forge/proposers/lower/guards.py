"""Inductor's shape assumptions (sympy text over the model's values) as Python the port checks per call.

The lowering records each guard of Dynamo's shape environment with its symbols written as the
expressions that read them in forward (`Eq(Mod(x.size(1), 16), 0)`, `x.size(0) >= 2`); sympy's
printing of those is Python syntax with a few functions of its own. They are translated here into
plain Python over the same expressions; a guard with anything else in it is refused (None), and the
caller decides what an unchecked guard costs (a dynamic fast path is then served exactly only).
"""

from __future__ import annotations

import ast

FUNCTIONS = {"Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">="}
ARITHMETIC = {"Mod": "%", "PythonMod": "%", "FloorDiv": "//", "IntTrueDiv": "/"}
BUILTINS = {"Max": "max", "Min": "min", "Abs": "abs"}
SIZE_METHODS = {"size", "stride", "storage_offset", "numel", "dim"}


def python_guard(text: str, roots: set[str]) -> str | None:
    """The guard as a Python boolean expression over `roots` (self, forward's arguments), else None."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
        expr = _translate(tree.body, roots)
    except (SyntaxError, ValueError):
        return None
    return ast.unparse(expr)


def _translate(node: ast.AST, roots: set[str]) -> ast.expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool):
        return node
    if isinstance(node, ast.Name):
        if node.id in ("True", "False"):
            return ast.Constant(node.id == "True")
        raise ValueError(f"a free symbol `{node.id}`")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
        return ast.UnaryOp(op=node.op, operand=_translate(node.operand, roots))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Pow | ast.FloorDiv |
                                                  ast.Mod | ast.BitAnd | ast.BitOr):
        op = {ast.BitAnd: ast.And, ast.BitOr: ast.Or}.get(type(node.op))
        left, right = _translate(node.left, roots), _translate(node.right, roots)
        if op is not None:  # sympy prints And/Or as & and |
            return ast.BoolOp(op=op(), values=[left, right])
        return ast.BinOp(left=left, op=node.op, right=right)
    if isinstance(node, ast.Compare):
        return ast.Compare(left=_translate(node.left, roots), ops=node.ops,
                           comparators=[_translate(c, roots) for c in node.comparators])
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(op=node.op, values=[_translate(v, roots) for v in node.values])
    if isinstance(node, ast.Call):
        return _call(node, roots)
    raise ValueError(f"`{ast.unparse(node)}`")


def _call(node: ast.Call, roots: set[str]) -> ast.expr:
    func = node.func
    if isinstance(func, ast.Name) and not node.keywords:
        args = [_translate(a, roots) for a in node.args]
        if func.id in FUNCTIONS and len(args) == 2:
            return ast.parse(f"({ast.unparse(args[0])}) {FUNCTIONS[func.id]} ({ast.unparse(args[1])})", mode="eval").body
        if func.id in ARITHMETIC and len(args) == 2:
            return ast.parse(f"({ast.unparse(args[0])}) {ARITHMETIC[func.id]} ({ast.unparse(args[1])})",
                             mode="eval").body
        if func.id in BUILTINS:
            return ast.Call(func=ast.Name(id=BUILTINS[func.id], ctx=ast.Load()), args=args, keywords=[])
        if func.id in ("And", "Or"):
            return ast.BoolOp(op=ast.And() if func.id == "And" else ast.Or(), values=args)
        if func.id == "Not" and len(args) == 1:
            return ast.UnaryOp(op=ast.Not(), operand=args[0])
        raise ValueError(f"sympy function `{func.id}`")
    if isinstance(func, ast.Attribute) and func.attr in SIZE_METHODS and _rooted(func.value, roots):
        if not all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in node.args):
            raise ValueError("a size read with a computed index")
        return node
    raise ValueError(f"`{ast.unparse(node)}`")


def _rooted(node: ast.AST, roots: set[str]) -> bool:
    """`self.conv.weight`, `x`, `self.block[0].weight`: attribute reads from a root, literal indices only."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id in roots
