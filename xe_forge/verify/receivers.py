"""What a method call's receiver is, as far as the AST can tell: a tensor method is known by its
receiver's type, not by its name (`seen.add(k)` on a Python set is not torch's `add`).

The static checks flag a method as torch work (or a tensor-to-host exit) only where the receiver
can be a tensor. Known non-tensors: literals and displays (`{}`, `[]`, `"..."`, f-strings),
comprehensions, calls of Python's containers and of the file's own classes, and names or `self`
attributes bound only to such values. The dispatch audit decides at run time by what dispatched.
"""

from __future__ import annotations

import ast

PYTHON_CALLS = frozenset({"set", "list", "dict", "tuple", "frozenset", "str", "sorted", "range", "enumerate", "zip",
                          "reversed", "int", "float", "bool", "len", "repr", "format", "map", "filter"})
DISPLAYS = (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp,
            ast.JoinedStr)


def python_value(value: ast.AST, classes: dict[str, ast.ClassDef]) -> bool:
    """Whether an expression surely evaluates to a Python (non-tensor) value."""
    if isinstance(value, ast.Constant):
        return not isinstance(value.value, type(None))
    if isinstance(value, DISPLAYS):
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id in PYTHON_CALLS or value.func.id in classes
    return False


def python_receiver(node: ast.AST, tree: ast.AST, classes: dict[str, ast.ClassDef]) -> bool:
    """Whether a receiver is surely not a tensor: a Python value itself, a name every binding of
    which (anywhere in the file) is one, or `self.<attr>` every assignment of which is one."""
    if python_value(node, classes):
        return True
    bindings = _bindings(node, tree)
    return bool(bindings) and all(python_value(v, classes) for v in bindings)


def _bindings(node: ast.AST, tree: ast.AST) -> list[ast.AST]:
    """Every value assigned to the name (anywhere in the file) or to `self.<attr>` (any method)."""
    if isinstance(node, ast.Name):
        want = lambda t: isinstance(t, ast.Name) and t.id == node.id  # noqa: E731
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        want = lambda t: (isinstance(t, ast.Attribute) and t.attr == node.attr  # noqa: E731
                          and isinstance(t.value, ast.Name) and t.value.id == "self")
    else:
        return []
    out: list[ast.AST] = []
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if want(target):
                    out.append(stmt.value)
                elif any(want(t) for t in ast.walk(target)):
                    out.append(target)  # unpacked from something: not known
        elif isinstance(stmt, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and want(stmt.target):
            out.append(stmt.value if stmt.value is not None else stmt.target)
        elif isinstance(stmt, ast.For | ast.comprehension) and any(want(t) for t in ast.walk(stmt.target)):
            out.append(stmt)
        elif isinstance(stmt, ast.withitem) and stmt.optional_vars is not None and any(
                want(t) for t in ast.walk(stmt.optional_vars)):
            out.append(stmt)
        elif isinstance(stmt, ast.arg) and isinstance(node, ast.Name) and stmt.arg == node.id:
            out.append(stmt)  # a parameter: anything
    return out
