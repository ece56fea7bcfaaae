"""A run of pointwise steps as one generated kernel and its launcher: any rank, any strides, broadcasting.

Consecutive pointwise steps of the same shape form a group. The group's kernel walks the output's
elements in order, turns each flat index into a multi-index by the run-time sizes, and reads every
input through its own strides (0 on a broadcast dim), so contiguity, views and broadcasting cost
nothing extra and nothing about the traced sizes is assumed. Values stay in fp32 (fp64 for fp64
data) between the steps of a group; each value a later step or forward needs is stored, in the
dtype PyTorch would give it. An in-place step writes into its first operand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xe_forge.proposers.fusion.expr import ExprError, elementwise
from xe_forge.proposers.lower.general.models import Arg, Step

FUSION_OPS = {"add", "sub", "mul", "div", "maximum", "minimum", "neg", "relu", "sigmoid", "exp", "log", "abs", "sqrt",
              "rsqrt", "erf", "silu", "square", "reciprocal", "relu6", "hardsigmoid", "hardswish", "softsign",
              "leaky_relu", "hardtanh", "elu", "selu", "tanh", "gelu", "softplus", "mish", "logsigmoid"}
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
LOGICAL = {"logical_and": "&", "logical_or": "|"}
OWN = {
    "floordiv": "tl.floor({0} / {1})", "remainder": "({0} - tl.floor({0} / {1}) * {1})", "pow": "xfg_pow({0}, {1})",
    "sign": "tl.where({0} > 0, 1.0, tl.where({0} < 0, -1.0, {0} * 0.0))", "floor": "tl.floor({0})",
    "ceil": "tl.ceil({0})", "trunc": "tl.where({0} < 0, tl.ceil({0}), tl.floor({0}))",
    "round": "xfg_round_half_even({0})", "sin": "tl.sin({0})", "cos": "tl.cos({0})", "exp2": "tl.exp2({0})",
    "log2": "tl.log2({0})", "log1p": "tl.log(1.0 + {0})", "expm1": "(tl.exp({0}) - 1.0)",
}
FIXED_POWERS = {0.5, 1.0, 2.0, 3.0, -0.5, -1.0, -2.0}


class PointwiseError(Exception):
    """A pointwise step the generator cannot write; the message names it."""


@dataclass
class Group:
    index: int
    members: list[Step]
    stored: list[Step]
    tensors: list[str] = field(default_factory=list)  # launcher parameter -> the call-site expression
    scalars: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # step id or host text -> kernel-side name
    bools: set[str] = field(default_factory=set)  # tensor parameters holding torch.bool data
    needs: set[str] = field(default_factory=set)  # fusion/expr.py helpers the kernel calls
    runtime: set[str] = field(default_factory=set)  # runtime/ functions the kernel and launcher call


def literal(value: object) -> str:
    if isinstance(value, bool):
        return "1.0" if value else "0.0"
    if isinstance(value, float) and value != value:
        return 'float("nan")'
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(value)


def write_group(index: int, members: list[Step], steps: dict[str, Step], render) -> tuple[str, str, str, Group]:
    """(kernel source, launcher source, call-site statement, the group: the helpers it needs) of one group;
    `render(arg)` writes host text."""
    ids = {m.id for m in members}
    stored = [m for m in members if any(u not in ids for u in m.users)]
    group = Group(index, members, stored)
    rank = max(1, len(members[-1].shape))
    kinds: dict[str, str] = {}
    body: list[str] = []
    leaves: dict[str, list[str]] = {}
    for m in members:
        operands, operand_kinds, member_leaves = [], [], []
        for arg in m.args:
            text, kind, leaf = _operand(group, arg, steps, kinds, leaves, render)
            operands.append(text)
            operand_kinds.append(kind)
            member_leaves += leaf
        params = {k: _scalar(group, v, steps, render) for k, v in m.params.items()
                  if not (v.kind == "lit" and v.value is None)}
        expr, kind = _expression(group, m, operands, operand_kinds, params)
        kinds[m.id] = kind
        leaves[m.id] = member_leaves[1:] if m.op == "where" else member_leaves
        body.append(f"v_{m.id} = {expr}")
    kernel, launcher, call = _sources(group, rank, body, kinds, leaves)
    return kernel, launcher, call, group


def _operand(group: Group, arg: Arg, steps: dict[str, Step], kinds: dict[str, str], leaves: dict[str, list[str]],
             render) -> tuple[str, str, list[str]]:
    if arg.kind == "ref" and arg.value in kinds:  # computed earlier in this group
        return f"v_{arg.value}", kinds[arg.value], leaves[arg.value]
    if arg.kind == "ref" and steps[arg.value].tensor:
        key = arg.value
        if key not in group.names:
            group.names[key] = f"a{len(group.tensors)}"
            group.tensors.append(render(arg))
        name = group.names[key]
        kind = "b" if steps[key].dtype == "torch.bool" else "f"
        if kind == "b":
            group.bools.add(name)
        return name, kind, [name]
    if arg.kind == "lit":
        return literal(arg.value), "f", [literal(arg.value) if isinstance(arg.value, float | int) else "0.0"]
    name = _scalar(group, arg, steps, render)
    return name, "f", [name]


def _scalar(group: Group, arg: Arg, steps: dict[str, Step], render) -> str:
    """A number the host passes to the kernel (a literal is written inline)."""
    if arg.kind == "lit":
        return literal(arg.value)
    if arg.kind == "ref" and steps[arg.value].tensor:
        raise PointwiseError(f"a tensor `{arg.value}` where a number is expected")
    key = render(arg)
    if key not in group.names:
        group.names[key] = f"s{len(group.scalars)}"
        group.scalars.append(key)
    return group.names[key]


def _float(text: str, kind: str) -> str:
    return f"{text}.to(ACC)" if kind == "b" else text


def _expression(group: Group, step: Step, args: list[str], kinds: list[str], params: dict[str, str]) -> tuple[str, str]:
    op = step.op
    if op in COMPARISONS:
        return f"({_float(args[0], kinds[0])} {COMPARISONS[op]} {_float(args[1], kinds[1])})", "b"
    if op in LOGICAL:
        left, right = (a if k == "b" else f"({a} != 0)" for a, k in zip(args, kinds, strict=True))
        return f"({left} {LOGICAL[op]} {right})", "b"
    if op == "logical_not":
        return (f"({args[0]} == 0)" if kinds[0] == "f" else f"({args[0]} == 0)"), "b"
    if op == "where":
        cond = args[0] if kinds[0] == "b" else f"({args[0]} != 0)"
        return f"tl.where({cond}, {_float(args[1], kinds[1])}, {_float(args[2], kinds[2])})", "f"
    args = [_float(a, k) for a, k in zip(args, kinds, strict=True)]
    if op == "pow" and len(args) == 2:
        if step.args[1].kind == "lit" and isinstance(step.args[1].value, int | float) and \
                float(step.args[1].value) in FIXED_POWERS:
            return elementwise("pow", args[:1], {"exponent": str(float(step.args[1].value))}, {}, group.needs), "f"
        group.runtime.add("xfg_pow")
        return OWN["pow"].format(*args), "f"
    if op in OWN:
        if op == "round":
            group.runtime.add("xfg_round_half_even")
        return OWN[op].format(*args), "f"
    if op == "celu":
        alpha = params.get("alpha", "1.0")
        return f"(tl.maximum({args[0]}, 0.0) + tl.minimum({alpha} * (tl.exp({args[0]} / {alpha}) - 1.0), 0.0))", "f"
    if op == "threshold":
        return f"tl.where({args[0]} > {params['threshold']}, {args[0]}, {params['value']})", "f"
    if op in FUSION_OPS:
        try:
            return elementwise(op, args, params, step.attrs, group.needs), "f"
        except (ExprError, KeyError) as err:
            raise PointwiseError(f"`{op}`: {err}") from None
    raise PointwiseError(f"no Triton expression for the pointwise op `{op}`")


def _sources(group: Group, rank: int, body: list[str], kinds: dict[str, str],
             leaves: dict[str, list[str]]) -> tuple[str, str, str]:
    n = group.index
    outs = [f"o{j}" for j in range(len(group.stored))]
    tensors = [f"a{i}" for i in range(len(group.tensors))]
    scalars = [f"s{i}" for i in range(len(group.scalars))]
    sizes = [f"n{d}" for d in range(1, rank)]
    strides = [f"{t}_s{d}" for t in outs + tensors for d in range(rank)]
    params = [f"{t}_ptr" for t in outs + tensors] + scalars + ["numel"] + sizes + strides
    lines = [f"def xfg_pw{n}_kernel({', '.join(params)}, ACC: tl.constexpr, BLOCK: tl.constexpr):",
             "    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
             "    mask = offs < numel",
             "    rest = offs"]
    for d in range(rank - 1, 0, -1):
        lines += [f"    i{d} = rest % n{d}", f"    rest = rest // n{d}"]
    lines.append("    i0 = rest")

    def address(t: str) -> str:
        return " + ".join(f"i{d} * {t}_s{d}" for d in range(rank))

    for t in tensors:
        load = f"tl.load({t}_ptr + {address(t)}, mask=mask, other=0)"
        lines.append(f"    {t} = {load}" + (" != 0" if t in group.bools else ".to(ACC)"))
    lines += [f"    {line}" for line in body]
    for j, step in enumerate(group.stored):
        value = f"v_{step.id}"
        lines.append(f"    tl.store(o{j}_ptr + {address(f'o{j}')}, xfg_cast({value}, o{j}_ptr.dtype.element_ty), mask=mask)")
    kernel = "@triton.jit\n" + "\n".join(lines) + "\n"
    launcher = _launcher(group, rank, outs, tensors, scalars, kinds, leaves)
    call = f"{', '.join(s.id for s in group.stored)}, = xfg_pw{n}({', '.join(group.tensors + group.scalars)})"
    return kernel, launcher, call


def _launcher(group: Group, rank: int, outs: list[str], tensors: list[str], scalars: list[str], kinds: dict[str, str],
              leaves: dict[str, list[str]]) -> str:
    n = group.index
    args = tensors + scalars
    lines = [f"def xfg_pw{n}({', '.join(args)}):",
             f"    shape = list(torch.broadcast_shapes({', '.join(f'{t}.shape' for t in tensors)}{',' if len(tensors) == 1 else ''}))",
             "    kshape = shape or [1]"]
    for j, step in enumerate(group.stored):
        if step.inplace:
            lines.append(f"    o{j} = {group.names[step.args[0].value]}")
            continue
        dtype = "torch.bool" if kinds[step.id] == "b" else f"xfg_result_dtype({', '.join(dict.fromkeys(leaves[step.id]))})"
        lines.append(f"    o{j} = torch.empty(shape, device={tensors[0]}.device, dtype={dtype})")
    strides = ", ".join(f"*xfg_strides({t}, kshape)" for t in outs + tensors)
    lines += ["    numel = o0.numel()",
              "    if numel > 0:",
              f"        xfg_pw{n}_kernel[(triton.cdiv(numel, 1024),)]({', '.join(outs + tensors)}, "
              + "".join(f"float({s}), " for s in scalars) + f"numel, *kshape[1:], {strides}, "
              f"ACC=xfg_acc(xfg_result_dtype({', '.join(tensors)})), BLOCK=1024, num_warps=4)",
              f"    return {', '.join(outs)},"]
    group.runtime |= {"xfg_result_dtype", "xfg_acc", "xfg_strides", "xfg_cast"}
    return "\n".join(lines) + "\n"
