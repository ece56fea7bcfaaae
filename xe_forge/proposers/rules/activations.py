"""exp2-activations: `tl.exp(x)` -> `tl.exp2(x * log2(e))`.

GPUs have a native base-2 exponential (one special-function instruction); tl.exp lowers to a
multiply by log2(e) plus exp2 anyway on some backends and to a slower libm-style sequence on others,
so writing exp2 directly removes work from sigmoid, softmax, GELU and SiLU epilogues.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, call_name, walk
from xe_forge.proposers.rules.kernels import Kernel
from xe_forge.proposers.rules.models import Applied, NotApplicable

LOG2E = "1.4426950408889634"
EXP_CALLS = ("tl.exp", "tl.math.exp", "triton.language.exp", "triton.language.math.exp")
_ATOMIC = (cst.Name, cst.Call, cst.Subscript, cst.Attribute, cst.Integer, cst.Float)


def _to_exp2(updated: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(updated, cst.Call) and isinstance(updated.func, cst.Attribute)
    arg = updated.args[0].value
    if not isinstance(arg, _ATOMIC) and not arg.lpar:
        arg = arg.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    scaled = cst.BinaryOperation(
        left=arg,
        operator=cst.Multiply(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")),
        right=cst.Float(LOG2E),
    )
    func = updated.func.with_changes(attr=cst.Name("exp2"))
    return updated.with_changes(func=func, args=[cst.Arg(scaled)])


def _exp_calls(ctx: RecipeContext, kernel: Kernel) -> tuple[dict[cst.CSTNode, Edit], str]:
    calls = [
        n for n in walk(kernel.node.body)
        if isinstance(n, cst.Call) and call_name(n) in EXP_CALLS and len(n.args) == 1 and n.args[0].keyword is None
    ]
    if not calls:
        raise NotApplicable("kernel calls no tl.exp")
    edits: dict[cst.CSTNode, Edit] = {call: _to_exp2 for call in calls}
    return edits, f"rewrote {len(calls)} tl.exp call(s) in {kernel.name} as tl.exp2 of a log2(e)-scaled argument"


@register("exp2-activations")
def exp2_activations(ctx: RecipeContext) -> Applied:
    return per_kernel(ctx, _exp_calls, "rewrite tl.exp as tl.exp2")
