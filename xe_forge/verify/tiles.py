"""The block sizes and loop steps written into a kernel file's jit bodies: what unseen shapes must cross.

With the launches' integer constexprs (recorded by the harness), these are the kernel's tiles. A tile is
a tile however it is spelled: a literal, a constant expression (`2 * 128`), a name bound to one, or a
module-level constant the body reads (`BLOCK: tl.constexpr = 256`), so all of them are folded.
"""

from __future__ import annotations

import ast

from xe_forge.verify.static import import_aliases, jit_bodies


def fold_int(node: ast.AST | None, consts: dict[str, int]) -> int | None:
    """An integer expression's value where it is constant: literals, names bound to constants, + - * // % <<
    >> ** and unary minus (a tile is a tile whether written 256, 2 * 128 or BLOCK)."""
    import operator

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow}
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, int) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = fold_int(node.operand, consts)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in ops:
        a, b = fold_int(node.left, consts), fold_int(node.right, consts)
        if a is None or b is None or (isinstance(node.op, ast.Pow) and not 0 <= b <= 64) \
                or (isinstance(node.op, ast.LShift) and not 0 <= b <= 64):
            return None
        try:
            return ops[type(node.op)](a, b)
        except ArithmeticError:
            return None
    if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "constexpr" and node.args:
        return fold_int(node.args[0], consts)
    return None


def _int_bindings(body: list[ast.stmt] | ast.AST, consts: dict[str, int]) -> dict[str, int]:
    """Names bound (once, by `X = ...` or `X: ann = ...`) to constant integers, folded in order."""
    out = dict(consts)
    nodes = body if isinstance(body, list) else list(ast.walk(body))
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        else:
            continue
        v = fold_int(value, out)
        if v is not None:
            out[target] = v
    return out


def jit_tiles(source: str) -> set[int]:
    """Block sizes written into jit bodies or read by them from module constants: `X: tl.constexpr = 64`
    (also `2 * 128`, or a module-level `BLOCK: tl.constexpr = 256`), `tl.arange(0, 256)`, a loop's step;
    with the launches' constexprs, what unseen shapes must cross."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    module_consts = _int_bindings(tree.body, {})
    out: set[int] = set()
    for body in jit_bodies(tree, import_aliases(tree)).values():
        if body is None:
            continue
        consts = _int_bindings(body, module_consts)
        params = {a.arg for a in body.args.posonlyargs + body.args.args + body.args.kwonlyargs}
        used = {n.id for n in ast.walk(body) if isinstance(n, ast.Name)} - params
        values: list[ast.AST] = []
        for node in ast.walk(body):
            if isinstance(node, ast.AnnAssign) and "constexpr" in ast.unparse(node.annotation):
                values.append(node.value)
            elif isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("arange", "range",
                                                                                        "static_range"):
                values += node.args[1:3] if ast.unparse(node.func).endswith("arange") else node.args[2:3]
        found = {fold_int(v, consts) for v in values}
        found |= {module_consts[n] for n in used if n in module_consts}  # module constants the body reads
        out |= {v for v in found if v is not None and v > 1}
    return out
