"""dtype stage: drop float32 upcasts of tl.dot operands, and float64 to float32.

Upcasting 16-bit tiles to float32 before tl.dot sends the dot down the fp32 path (TF32 or scalar
FMA) instead of DPAS / tensor cores on 16-bit inputs; the fp32 accumulator keeps the sum accurate.
Dropping `.to(tl.float32)` on a loaded tile is exact when the tile is already fp32, so the rewrite
never changes fp32 programs and only lowers the input precision of 16-bit ones.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, apply_edits, call_name, code_of, dotted, read_names, walk
from xe_forge.proposers.rules.kernels import DOT_CALLS, Kernel
from xe_forge.proposers.rules.launches import uses_of
from xe_forge.proposers.rules.models import Applied, NotApplicable

FLOAT32 = ("tl.float32", "triton.language.float32")
FLOAT64 = {"tl.float64": "tl.float32", "triton.language.float64": "triton.language.float32",
           "torch.float64": "torch.float32", "torch.double": "torch.float32"}


def _upcast_base(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` when node is `x.to(tl.float32)`, else None."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "to"
        and len(node.args) == 1
        and dotted(node.args[0].value) in FLOAT32
    ):
        return node.func.value
    return None


def _is_load(node: cst.BaseExpression) -> bool:
    return (call_name(node) or "").rsplit(".", 1)[-1] == "load"


def _assigns(fn: cst.FunctionDef, name: str) -> list[cst.Assign]:
    return [
        n for n in walk(fn.body)
        if isinstance(n, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets)
    ]


def _operand_edits(kernel: Kernel, operand: cst.BaseExpression, dot_args: set[int]) -> dict[cst.CSTNode, Edit]:
    """Edits removing the upcast feeding one dot operand; NotApplicable if it is not a loaded tile."""
    base = _upcast_base(operand)
    if base is not None:
        if _is_load(base):
            return {operand: base}
        if isinstance(base, cst.Name):
            bindings = _assigns(kernel.node, base.value)
            if bindings and all(_is_load(b.value) for b in bindings):
                return {operand: base}
        raise NotApplicable(f"the upcast tl.dot operand `{code_of(base)}` is not a tile loaded by tl.load")
    if isinstance(operand, cst.Name):
        bindings = _assigns(kernel.node, operand.value)
        bases = [_upcast_base(b.value) for b in bindings]
        if bindings and all(b is not None and _is_load(b) for b in bases):
            if any(id(use) not in dot_args for use in uses_of(kernel.node.body, operand.value)):
                raise NotApplicable(f"`{operand.value}` is upcast and also used outside tl.dot")
            return {b.value: base for b, base in zip(bindings, bases, strict=True)}  # type: ignore[misc]
    raise NotApplicable("no tl.dot operand is cast to float32")


def _accumulate(node: cst.CSTNode, dot: cst.Call) -> tuple[cst.CSTNode, str] | None:
    """For `acc += dot` or `acc = acc + dot`: the statement and the accumulator name."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) and node.value is dot:
        if isinstance(node.target, cst.Name):
            return node, node.target.value
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
        value, name = node.value, node.targets[0].target.value
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            pair = (value.left, value.right)
            if dot in pair and any(isinstance(s, cst.Name) and s.value == name for s in pair):
                return node, name
    return None


def _drop_upcasts(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[cst.CSTNode, Edit], str]:
    dots = [n for n in walk(kernel.node.body) if isinstance(n, cst.Call) and call_name(n) in DOT_CALLS]
    if not dots:
        raise NotApplicable("kernel has no tl.dot")
    dot_args = {id(a.value) for d in dots for a in d.args[:2]}
    edits: dict[cst.CSTNode, Edit] = {}
    dropped = 0
    reasons: list[str] = []
    for dot in dots:
        operands = [a.value for a in dot.args[:2] if a.keyword is None]
        try:
            operand_edits = [_operand_edits(kernel, op, dot_args) for op in operands]
        except NotApplicable as err:
            reasons.append(err.reason)
            continue
        if len(operand_edits) != 2:
            reasons.append("tl.dot operands are not passed positionally")
            continue
        dropped += 2
        for found in operand_edits:
            edits.update(found)
        statement = next((s for s in walk(kernel.node.body) if _accumulate(s, dot)), None)
        if statement is not None:
            _, acc = _accumulate(statement, dot)  # type: ignore[misc]
            edits[statement] = _fused_accumulate(acc)
    if not dropped:
        raise NotApplicable(sorted(set(reasons))[0] if reasons else "no tl.dot operand is cast to float32")
    return edits, f"dropped the float32 upcast of {dropped} tl.dot operands in {kernel.name}, accumulating in place"


def _fused_accumulate(acc: str) -> Edit:
    """`acc += tl.dot(a, b)` -> `acc = tl.dot(a, b, acc)` (operand edits already applied inside)."""

    def rewrite(updated: cst.CSTNode) -> cst.CSTNode:
        new_dot = next(
            n for n in walk(updated)
            if isinstance(n, cst.Call) and call_name(n) in DOT_CALLS
        )
        positional = [a for a in new_dot.args if a.keyword is None][:2]
        keywords = [a for a in new_dot.args if a.keyword is not None and a.keyword.value != "acc"]
        args = [*positional, cst.Arg(cst.Name(acc)), *keywords]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        call = new_dot.with_changes(args=args)
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(acc))], value=call)

    return rewrite


@register("drop-dot-upcast")
def drop_dot_upcast(ctx: RecipeContext) -> Applied:
    return per_kernel(ctx, _drop_upcasts, "drop tl.dot upcasts")


# ----------------------------------------------------------------------------------------------


def _returned_names(fn: cst.FunctionDef) -> set[str]:
    """Names returned as they are (`return out`, `return a, b`): their dtype is the output dtype."""
    names: set[str] = set()
    for node in walk(fn.body):
        if isinstance(node, cst.Return) and node.value is not None:
            values = [e.value for e in node.value.elements] if isinstance(node.value, cst.Tuple) else [node.value]
            names |= {v.value for v in values if isinstance(v, cst.Name)}
    return names


def _host_fp64_edits(fn: cst.FunctionDef) -> tuple[dict[cst.CSTNode, Edit], list[str]]:
    """float64 in a launching host function, except on tensors it returns as they are."""
    outputs = _returned_names(fn)
    edits: dict[cst.CSTNode, Edit] = {}
    kept: list[str] = []
    for statement in walk(fn.body):
        if not isinstance(statement, (cst.Assign, cst.Expr)):
            continue
        targets = read_names(statement.targets[0].target) if isinstance(statement, cst.Assign) else set()
        for node in walk(statement.value):
            new = None
            if dotted(node) in FLOAT64:
                new = cst.parse_expression(FLOAT64[dotted(node)])  # type: ignore[index]
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "double":
                new = lambda u: u.with_changes(func=u.func.with_changes(attr=cst.Name("float")))  # noqa: E731
            if new is None:
                continue
            if targets & outputs:
                kept.extend(sorted(targets & outputs))
            else:
                edits[node] = new
    return edits, kept


def _fp64_host_and_kernels(ctx: RecipeContext) -> tuple[dict[cst.CSTNode, Edit], list[str], list[str]]:
    edits: dict[cst.CSTNode, Edit] = {}
    where: list[str] = []
    for kernel in ctx.kernels.values():
        found = {n: cst.parse_expression(FLOAT64[dotted(n)]) for n in walk(kernel.node.body)
                 if dotted(n) in FLOAT64 and dotted(n).startswith(("tl.", "triton."))}  # type: ignore[union-attr]
        if found:
            edits.update(found)
            where.append(kernel.name)
    kept: list[str] = []
    scopes = {id(launch.scope): launch.scope for launch in ctx.launches if launch.scope is not None}
    for scope in scopes.values():
        host_edits, host_kept = _host_fp64_edits(scope)  # type: ignore[arg-type]
        kept.extend(host_kept)
        if host_edits:
            edits.update(host_edits)
            where.append(f"{scope.name.value} (host)")  # type: ignore[union-attr]
    return edits, where, kept


@register("fp64-to-fp32")
def fp64_to_fp32(ctx: RecipeContext) -> Applied:
    edits, where, kept = _fp64_host_and_kernels(ctx)
    if not edits:
        if kept:
            raise NotApplicable(
                f"float64 appears only on returned tensors ({', '.join(sorted(set(kept)))}); "
                "changing it would change the output dtype"
            )
        raise NotApplicable("no float64 in the kernels or in the host code that launches them")
    code = apply_edits(ctx.module, edits)
    return Applied(code=code, rationale=f"Computed in float32 instead of float64 in {', '.join(where)}.")
