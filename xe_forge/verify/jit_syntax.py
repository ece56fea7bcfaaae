"""The Python a GPU build of a @triton.jit body accepts: an allowlist read from the installed Triton.

The CPU checks kernels with Triton's interpreter, which runs a jit body as plain Python, so `break`,
`continue`, `try`, a lambda or a dict work there, while Triton's code generator, which compiles the
body for a GPU, refuses every AST node it has no `visit_` method for (red team 4, R5: a kernel with
`break` passed every CPU check and cannot be built for any GPU). The allowed nodes are those the
installed code generator visits, plus the parts its visitors read without visiting (operators,
comprehensions, `with` items, f-string fields), so the list follows the Triton that will compile it.
"""

from __future__ import annotations

import ast
import functools

from xe_forge.verify.models import Finding

# read by their parents' visitors, never visited themselves
IMPLICIT = (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.comprehension, ast.withitem,
            ast.FormattedValue, ast.expr_context)


@functools.cache
def compiled_nodes() -> frozenset[str] | None:
    """Names of the AST node types Triton's code generator visits; None without an importable Triton."""
    try:
        from triton.compiler.code_generator import CodeGenerator
    except Exception:
        return None
    return frozenset(name[len("visit_"):] for name in dir(CodeGenerator) if name.startswith("visit_"))


def syntax_findings(body: ast.FunctionDef) -> list[Finding]:
    """One finding per kind of node in the jit body that Triton's code generator cannot compile."""
    allowed = compiled_nodes()
    if allowed is None:
        return []
    out, seen = [], set()
    for stmt in body.body:
        for node in ast.walk(stmt):
            kind = type(node).__name__
            if kind in allowed or isinstance(node, IMPLICIT) or kind in seen:
                continue
            seen.add(kind)
            out.append(Finding(check="jit-syntax", line=getattr(node, "lineno", None),
                               message=f"@triton.jit `{body.name}` uses `{_spelling(node)}`, which Triton's code "
                                       "generator does not compile: it runs in the CPU's interpreter only, and no "
                                       "GPU build accepts it",
                               hint="write it with what a kernel compiles: a loop bound or a mask instead of "
                                    "break/continue, tl.where instead of try or a conditional expression"))
    return out


def _spelling(node: ast.AST) -> str:
    words = {ast.Break: "break", ast.Continue: "continue", ast.Try: "try", ast.Lambda: "lambda", ast.Raise: "raise",
             ast.Global: "global", ast.Nonlocal: "nonlocal", ast.Delete: "del", ast.Dict: "a dict literal",
             ast.Set: "a set literal", ast.GeneratorExp: "a generator expression", ast.Starred: "*unpacking"}
    return next((w for t, w in words.items() if isinstance(node, t)), type(node).__name__)
