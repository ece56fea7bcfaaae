"""Reductions that cross tiles: per-slot partials written by one launch, combined by the next.

A row's columns are cut into slots of SW columns (SW divides every BLOCK_N the kernel may be tuned
to, so the slot count is known to the host whatever tile the autotuner picks). The producing tile
views its [BLOCK_M, W] values as [BLOCK_M, W // SW, SW] and reduces the last axis: sums, maxima,
a running max with its sum of exponentials (logsumexp, softmax), or a slot's sum and centred sum
of squares (mean and variance, combined with Chan's formula so large means do not cancel). Group
norms use slots that never straddle a group. Batch statistics (BatchNorm in training mode) reduce
over rows instead: each tile stores its column sums and centred sums of squares, combined by a
launch of their own (batch_stats.py).

The kernel writer (writer.py) calls in here with itself; this module asks of it only what
`StatWriter` names, so writer.py imports this module and not the other way round.
"""

from __future__ import annotations

from typing import Any, Protocol

from xe_forge.proposers.fusion import batch_stats
from xe_forge.proposers.fusion.ir import Node, Operand
from xe_forge.proposers.fusion.naming import STAT_PARTS, HostNames, ident
from xe_forge.proposers.fusion.plan import Plan, Stat


class StatWriter(Protocol):
    """The kernel writer as the statistics code uses it (writer.KernelWriter)."""

    plan: Plan
    host: HostNames
    combined: dict[str, dict[str, str]]

    def arg(self, name: str, host: str, *, constexpr: bool = False) -> str: ...

    def emit(self, line: str) -> None: ...

    def local(self, node_id: str, expr: str, suffix: str = "") -> str: ...

    def space(self, cols: str) -> Any: ...

    def scalar(self, operand: Operand, owner: str, key: str) -> str: ...

    def operand(self, operand: Operand, context: str, cols: str, owner: str, key: str) -> str: ...

    def value(self, node_id: str, cols: str) -> str: ...

NEG_INF, POS_INF = 'float("-inf")', 'float("inf")'
SLOTS_PER_STEP = 64


def _buffers(w: StatWriter, stat: Stat) -> dict[str, str]:
    parts = batch_stats.PARTIALS if stat.family == "col" else STAT_PARTS[stat.combine]
    return {p: w.arg(f"st_{ident(stat.node)}_{p}_ptr", w.host.stat(stat.node, p)) for p in parts}


def _slot_args(w: StatWriter, stat: Stat) -> tuple[str, str]:
    slots = w.arg(f"S_{ident(stat.node)}", w.host.slots(stat.node))
    width = w.arg(f"SW_{ident(stat.node)}", w.host.slot_width(stat.node), constexpr=True)
    return slots, width


def write_partials(w: StatWriter, stat: Stat) -> None:
    source = w.plan.node(stat.source)
    x = w.value(source.id, source.cols)
    space = w.space(source.cols)
    buffers = _buffers(w, stat)
    name = ident(stat.node)
    w.emit(f"# partial statistics of `{stat.node}` ({stat.combine}) for the next launch")
    if stat.family == "col":  # combined by the launch in batch_stats.py
        cols = w.arg(f"C_{name}", w.host.count(source.cols))
        w.emit(f"n_{name} = tl.sum(mask_m.to(tl.float32), 0)")
        w.emit(f"xs_{name} = tl.where({space.mask2d}, {x}, 0.0)")
        w.emit(f"csum_{name} = tl.sum(xs_{name}, 0)")
        w.emit(f"cd_{name} = tl.where({space.mask2d}, {x} - (csum_{name} / tl.maximum(n_{name}, 1.0))[None, :], 0.0)")
        w.emit(f"tl.store({buffers['sum']} + pid_m * {cols} + {space.offs}, csum_{name}, mask={space.mask})")
        w.emit(f"tl.store({buffers['m2']} + pid_m * {cols} + {space.offs}, tl.sum(cd_{name} * cd_{name}, 0), "
               f"mask={space.mask})")
        w.emit(f"tl.store({buffers['count']} + pid_m, n_{name})")
        return
    slots, sw = _slot_args(w, stat)
    shape = f"(BLOCK_M, {space.width} // {sw}, {sw})"
    w.emit(f"slot_{name} = pid_n * ({space.width} // {sw}) + tl.arange(0, {space.width} // {sw})")
    w.emit(f"smask_{name} = mask_m[:, None] & (slot_{name}[None, :] < {slots})")
    address = f"offs_m[:, None] * {slots} + slot_{name}[None, :]"
    parts: dict[str, str] = {}
    if stat.combine in ("sum", "moments"):
        w.emit(f"x3_{name} = tl.reshape(tl.where({space.mask2d}, {x}, 0.0), {shape})")
        parts["sum"] = f"tl.sum(x3_{name}, 2)"
    if stat.combine in ("max", "lse"):
        w.emit(f"x3_{name} = tl.reshape(tl.where({space.mask2d}, {x}, {NEG_INF}), {shape})")
        w.emit(f"pmax_{name} = tl.max(x3_{name}, 2)")
        parts["max"] = f"pmax_{name}"
    if stat.combine == "min":
        w.emit(f"x3_{name} = tl.reshape(tl.where({space.mask2d}, {x}, {POS_INF}), {shape})")
        parts["min"] = f"tl.min(x3_{name}, 2)"
    if stat.combine == "lse":
        parts["sumexp"] = f"tl.sum(tl.exp(x3_{name} - pmax_{name}[:, :, None]), 2)"
    if stat.combine == "moments":
        count = w.space(source.cols).count
        w.emit(f"psum_{name} = tl.sum(x3_{name}, 2)")
        w.emit(f"cnt_{name} = tl.maximum(tl.minimum({count} - slot_{name} * {sw}, {sw}), 1).to(tl.float32)")
        w.emit(f"f3_{name} = tl.reshape(tl.where({space.mask2d}, 1.0, 0.0), {shape})")
        w.emit(f"d3_{name} = (x3_{name} - (psum_{name} / cnt_{name}[None, :])[:, :, None]) * f3_{name}")
        parts["sum"] = f"psum_{name}"
        parts["m2"] = f"tl.sum(d3_{name} * d3_{name}, 2)"
    for part, expr in parts.items():
        w.emit(f"tl.store({buffers[part]} + {address}, {expr}, mask=smask_{name})")


def _row_loop(w: StatWriter, stat: Stat, body: list[str]) -> None:
    slots, _ = _slot_args(w, stat)
    name = ident(stat.node)
    w.emit(f"for s0 in range(0, {slots}, {SLOTS_PER_STEP}):")
    w.emit(f"    slot = s0 + tl.arange(0, {SLOTS_PER_STEP})")
    w.emit(f"    pm = mask_m[:, None] & (slot[None, :] < {slots})")
    w.emit(f"    at_{name} = offs_m[:, None] * {slots} + slot[None, :]")
    for line in body:
        w.emit("    " + line)


def combine_row(w: StatWriter, stat: Stat) -> dict[str, str]:
    """Vectors over the tile's rows: 'sum', 'max', 'min', 'lse', or 'mean' and 'm2' (with the count 'n')."""
    if stat.node in w.combined:
        return w.combined[stat.node]
    buffers = _buffers(w, stat)
    source = w.plan.node(stat.source)
    count = w.arg(f"C_{ident(stat.node)}", w.host.count(source.cols))
    name = ident(stat.node)
    at = f"at_{name}"
    out: dict[str, str] = {"n": count}
    w.emit(f"# combine the partial statistics of `{stat.node}` across the row")
    if stat.combine in ("sum", "moments"):
        w.emit(f"tot_{name} = tl.zeros([BLOCK_M], dtype=tl.float32)")
        _row_loop(w, stat, [f"tot_{name} += tl.sum(tl.load({buffers['sum']} + {at}, mask=pm, other=0.0), 1)"])
        out["sum"] = f"tot_{name}"
    if stat.combine in ("max", "min"):
        ident_value, fn = (NEG_INF, "max") if stat.combine == "max" else (POS_INF, "min")
        w.emit(f"red_{name} = tl.full([BLOCK_M], {ident_value}, dtype=tl.float32)")
        _row_loop(w, stat, [f"red_{name} = tl.{'maximum' if fn == 'max' else 'minimum'}(red_{name}, "
                            f"tl.{fn}(tl.load({buffers[fn]} + {at}, mask=pm, other={ident_value}), 1))"])
        out[fn] = f"red_{name}"
    if stat.combine == "lse":
        w.emit(f"m_{name} = tl.full([BLOCK_M], {NEG_INF}, dtype=tl.float32)")
        w.emit(f"e_{name} = tl.zeros([BLOCK_M], dtype=tl.float32)")
        _row_loop(w, stat, [
            f"pmax = tl.load({buffers['max']} + {at}, mask=pm, other={NEG_INF})",
            f"psum = tl.load({buffers['sumexp']} + {at}, mask=pm, other=0.0)",
            f"new_m = tl.maximum(m_{name}, tl.max(pmax, 1))",
            f"e_{name} = e_{name} * tl.exp(m_{name} - new_m) + tl.sum(psum * tl.exp(pmax - new_m[:, None]), 1)",
            f"m_{name} = new_m",
        ])
        w.emit(f"lse_{name} = m_{name} + tl.log(e_{name})")
        out["lse"] = f"lse_{name}"
    if stat.combine == "moments":
        _, sw = _slot_args(w, stat)
        w.emit(f"mean_{name} = tot_{name} / {count}")
        w.emit(f"m2_{name} = tl.zeros([BLOCK_M], dtype=tl.float32)")
        _row_loop(w, stat, [
            f"cnt = tl.maximum(tl.minimum({count} - slot * {sw}, {sw}), 1).to(tl.float32)",
            f"d = tl.load({buffers['sum']} + {at}, mask=pm, other=0.0) / cnt[None, :] - mean_{name}[:, None]",
            f"q = tl.load({buffers['m2']} + {at}, mask=pm, other=0.0) + cnt[None, :] * d * d",
            f"m2_{name} += tl.sum(tl.where(pm, q, 0.0), 1)",
        ])
        out["mean"], out["m2"] = f"mean_{name}", f"m2_{name}"
    w.combined[stat.node] = out
    return out


def row_value(w: StatWriter, node: Node) -> str:
    """The value of a row reduction (sum, mean, max, min, logsumexp, var, std) from its partials."""
    parts = combine_row(w, w.plan.stats[node.id])
    correction = int(node.attrs.get("correction", 1) or 0)
    expr = {
        "sum": parts.get("sum"), "max": parts.get("max"), "min": parts.get("min"), "logsumexp": parts.get("lse"),
        "mean": f"{parts.get('sum')} / {parts['n']}",
        "var": f"{parts.get('m2')} / ({parts['n']} - {correction})",
        "std": f"tl.sqrt({parts.get('m2')} / ({parts['n']} - {correction}))",
    }[node.op]
    return w.local(node.id, str(expr))


def _group_stats(w: StatWriter, node: Node, stat: Stat, cols: str) -> tuple[str, str]:
    """Per-column mean and biased variance of each column's group, from slot partials."""
    buffers = _buffers(w, stat)
    slots, sw = _slot_args(w, stat)
    size = w.arg(f"G_{ident(node.id)}", w.host.group(node.id))
    space = w.space(cols)
    name = ident(node.id)
    first = f"gfirst_{name}"
    w.emit(f"# combine the slot partials of each column's group for `{node.id}`")
    w.emit(f"{first} = ({space.offs} // {size}) * ({size} // {sw})")
    w.emit(f"gsum_{name} = tl.zeros([BLOCK_M, {space.width}], dtype=tl.float32)")
    w.emit(f"for j in range(0, {size} // {sw}):")
    w.emit(f"    gsum_{name} += tl.load({buffers['sum']} + offs_m[:, None] * {slots} + ({first} + j)[None, :], "
           f"mask={space.mask2d}, other=0.0)")
    w.emit(f"gmean_{name} = gsum_{name} / {size}")
    w.emit(f"gm2_{name} = tl.zeros([BLOCK_M, {space.width}], dtype=tl.float32)")
    w.emit(f"for j in range(0, {size} // {sw}):")
    w.emit(f"    at = offs_m[:, None] * {slots} + ({first} + j)[None, :]")
    w.emit(f"    d = tl.load({buffers['sum']} + at, mask={space.mask2d}, other=0.0) / {sw} - gmean_{name}")
    w.emit(f"    gm2_{name} += tl.load({buffers['m2']} + at, mask={space.mask2d}, other=0.0) + {sw} * d * d")
    return f"gmean_{name}", f"(gm2_{name} / {size})"


def _normalise(w: StatWriter, node: Node, x: str, mean: str, var: str) -> str:
    eps = w.scalar(node.scalars["eps"], node.id, "eps")
    weight = w.operand(node.args[1], "full", node.cols, node.id, "w")
    bias = w.operand(node.args[2], "full", node.cols, node.id, "b")
    return w.local(node.id, f"({x} - {mean}) * tl.rsqrt({var} + {eps}) * {weight} + {bias}")


def norm_value(w: StatWriter, node: Node) -> str:
    """softmax, log_softmax, layer_norm, group_norm, batch_norm and 1-D pooling of a full value."""
    source = w.plan.node(node.args[0].ref or "")
    x = w.value(source.id, source.cols)
    name = ident(node.id)
    if node.op == "pool":
        k = int(node.attrs["kernel"])  # type: ignore[arg-type]
        x3 = f"tl.reshape({x}, (BLOCK_M, {w.space(source.cols).width} // {k}, {k}))"
        return w.local(node.id, f"tl.max({x3}, 2)" if node.attrs["mode"] == "max" else f"tl.sum({x3}, 2) / {k}")
    if node.op == "group_norm" and node.id not in w.plan.stats:
        return _group_in_tile(w, node, x, source.cols)
    if node.op == "group_norm":
        mean, var = _group_stats(w, node, w.plan.stats[node.id], source.cols)
        return _normalise(w, node, x, mean, var)
    if node.op == "batch_norm":
        if node.id not in w.plan.stats:  # eval mode: running statistics, an elementwise affine
            mean = w.operand(node.args[3], "full", node.cols, node.id, "rm")
            var = w.operand(node.args[4], "full", node.cols, node.id, "rv")
            return _normalise(w, node, x, mean, var)
        stat = w.plan.stats[node.id]
        space = w.space(source.cols)
        for part in ("mean", "var"):
            pointer = w.arg(f"st_{ident(stat.node)}_{part}_ptr", w.host.stat(stat.node, part))
            w.emit(f"c{part}_{name} = tl.load({pointer} + {space.offs}, mask={space.mask}, other=0.0)")
        return _normalise(w, node, x, f"cmean_{name}[None, :]", f"cvar_{name}[None, :]")
    parts = combine_row(w, w.plan.stats[node.id])
    if node.op == "softmax":
        return w.local(node.id, f"tl.exp({x} - {parts['lse']}[:, None])")
    if node.op == "log_softmax":
        return w.local(node.id, f"({x} - {parts['lse']}[:, None])")
    mean, var = f"{parts['mean']}[:, None]", f"({parts['m2']} / {parts['n']})[:, None]"
    return _normalise(w, node, x, mean, var)


def _group_in_tile(w: StatWriter, node: Node, x: str, cols: str) -> str:
    size = w.arg(f"G_{ident(node.id)}", w.host.group(node.id), constexpr=True)
    width = w.space(cols).width
    name = ident(node.id)
    w.emit(f"# group norm inside the tile: {size} consecutive columns per group, {width} // {size} groups")
    w.emit(f"g3_{name} = tl.reshape({x}, (BLOCK_M, {width} // {size}, {size}))")
    w.emit(f"gd_{name} = g3_{name} - (tl.sum(g3_{name}, 2) / {size})[:, :, None]")
    w.emit(f"gvar_{name} = tl.sum(gd_{name} * gd_{name}, 2) / {size}")
    eps = w.scalar(node.scalars["eps"], node.id, "eps")
    w.emit(f"gn_{name} = tl.reshape(gd_{name} * tl.rsqrt(gvar_{name} + {eps})[:, :, None], (BLOCK_M, {width}))")
    weight = w.operand(node.args[1], "full", node.cols, node.id, "w")
    bias = w.operand(node.args[2], "full", node.cols, node.id, "b")
    return w.local(node.id, f"gn_{name} * {weight} + {bias}")
