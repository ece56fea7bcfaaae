"""The runtime functions a port uses, copied from runtime/ with everything they call.

runtime/ is ordinary, importable, tested Python; a port file must stand alone, so the functions it
names are copied out by source (ast), with the runtime names they reference, transitively, in the
order the runtime defines them. Imports are not copied: the port imports torch and triton itself.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

RUNTIME = Path(__file__).with_name("runtime")
FILES = ("common", "gemm", "conv", "reduce", "norm", "pool", "dropout")


@cache
def definitions() -> dict[str, tuple[int, str, frozenset[str]]]:
    """name -> (order, source, names it references) for every top-level def and assignment of runtime/."""
    out: dict[str, tuple[int, str, frozenset[str]]] = {}
    for file in FILES:
        text = (RUNTIME / f"{file}.py").read_text()
        lines = text.splitlines()
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                name = node.name
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
            else:
                continue
            used = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            out[name] = (len(out), "\n".join(lines[start - 1:node.end_lineno]), used)
    return out


def closure(names: set[str]) -> list[str]:
    """`names` and every runtime name they reach, in definition order."""
    defs = definitions()
    unknown = sorted(n for n in names if n not in defs)
    if unknown:
        raise KeyError(f"not in the general path's runtime: {', '.join(unknown)}")
    seen: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack += [n for n in defs[name][2] if n in defs and n not in seen]
    return sorted(seen, key=lambda n: defs[n][0])


def source(names: set[str]) -> str:
    """The copied definitions, decorators included, as one block of module source."""
    defs = definitions()
    return "\n\n\n".join(defs[name][1] for name in closure(names))
