"""One phase's @triton.jit kernel, written as text: parameters (with what the host passes) and body.

Values are emitted on first use (memoised by node and column space), so the body follows the data
dependencies: loads, the GEMM accumulator, elementwise chains, statistics combined from partials,
then the stores and partial statistics this phase owes later phases. Statistics code lives in
stats.py; this module handles values, spaces and operands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xe_forge.proposers.fusion import stats
from xe_forge.proposers.fusion.expr import elementwise
from xe_forge.proposers.fusion.ir import Node, Operand
from xe_forge.proposers.fusion.naming import HostNames, ident
from xe_forge.proposers.fusion.plan import Phase, Plan


class EmitError(Exception):
    """A value the writer cannot express in this phase; the message names it."""


@dataclass
class Arg:
    name: str
    host: str
    constexpr: bool = False


@dataclass
class Space:
    """Column offsets and masks of one column space inside a tile."""

    width: str
    offs: str
    mask: str
    mask2d: str
    count: str


@dataclass
class KernelWriter:
    plan: Plan
    phase: Phase
    host: HostNames
    name: str
    args: list[Arg] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    """Lines that do not depend on the program id (tensor descriptors), emitted before it."""
    needs: set[str] = field(default_factory=set)
    memo: dict[tuple[str, str], str] = field(default_factory=dict)
    spaces: dict[str, Space] = field(default_factory=dict)
    combined: dict[str, dict[str, str]] = field(default_factory=dict)
    """Statistics already combined in this kernel: stat node -> vectors ('sum', 'lse', 'mean', ...)."""

    # ------------------------------------------------------------------ plumbing

    def arg(self, name: str, host: str, *, constexpr: bool = False) -> str:
        if not any(a.name == name for a in self.args):
            self.args.append(Arg(name, host, constexpr))
        return name

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def local(self, node_id: str, expr: str, suffix: str = "") -> str:
        name = f"v_{ident(node_id)}{suffix}"
        self.emit(f"{name} = {expr}")
        return name

    @property
    def tiled(self) -> bool:
        return self.phase.kind != "rows"

    def space(self, cols: str) -> Space:
        """Offsets of `cols` inside this phase's tile: the domain itself, or a pooled view of it."""
        if cols in self.spaces:
            return self.spaces[cols]
        domain = self.phase.domain
        if cols == domain:
            space = Space("BLOCK_N", "offs_n", "mask_n", "mask", self.arg("N", self.host.count(domain)))
        elif cols.startswith(domain + "/"):
            factor = 1
            for part in cols[len(domain) + 1:].split("/"):
                factor *= int(part)
            count = self.arg(f"N_{factor}", self.host.count(cols))
            width = f"(BLOCK_N // {factor})"
            offs, mask = f"offs_n_{factor}", f"mask_n_{factor}"
            self.emit(f"{offs} = pid_n * {width} + tl.arange(0, BLOCK_N // {factor})")
            self.emit(f"{mask} = {offs} < {count}")
            self.emit(f"mask_{factor} = mask_m[:, None] & {mask}[None, :]")
            space = Space(width, offs, mask, f"mask_{factor}", count)
        else:
            raise EmitError(f"column space {cols} is not visible in a launch tiling {domain}")
        self.spaces[cols] = space
        return space

    # ------------------------------------------------------------------ values

    def scalar(self, operand: Operand, owner: str, key: str) -> str:
        if operand.ref:
            return self.value(operand.ref, "")
        if operand.host:
            return self.arg(f"s_{ident(owner)}_{key}", f"float({operand.host})")
        return repr(float(operand.value if operand.value is not None else 0.0))

    def operand(self, operand: Operand, context: str, cols: str, owner: str, key: str) -> str:
        """An argument of an op computed in `context` ('full', 'row', 'col', 'scalar') over `cols`."""
        if not operand.ref:
            return self.scalar(operand, owner, key)
        node = self.plan.node(operand.ref)
        if node.kind == "scalar":
            return self.value(node.id, "")
        value = self.value(node.id, cols if node.kind in ("full", "col") else "")
        if context == "full" and node.kind == "row":
            return f"{value}[:, None]"
        if context == "full" and node.kind == "col":
            return f"{value}[None, :]"
        return value

    def value(self, node_id: str, cols: str) -> str:
        node = self.plan.node(node_id)
        key = (node_id, cols if node.kind in ("full", "col") else "")
        if key not in self.memo:
            self.memo[key] = self._compute(node, key[1])
        return self.memo[key]

    def _compute(self, node: Node, cols: str) -> str:
        if node.kind == "full" and not self.tiled:
            raise EmitError(f"the per-row launch cannot read the full value `{node.id}`")
        if node.kind == "full" and node.id not in self.phase.nodes:
            return self._load(node)
        if node.op == "param":
            return self._param(node, cols)
        if node.op == "gemm":
            return "acc"
        if node.id in self.plan.stats and node.kind == "row":
            return stats.row_value(self, node)
        if node.op in ("softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm", "pool"):
            return stats.norm_value(self, node)
        context = node.kind
        args = [self.operand(a, context, node.cols if context == "full" else cols, node.id, f"a{i}")
                for i, a in enumerate(node.args)]
        scalars = {k: self.scalar(v, node.id, k) for k, v in node.scalars.items()}
        return self.local(node.id, elementwise(node.op, args, scalars, node.attrs, self.needs))

    def _param(self, node: Node, cols: str) -> str:
        pointer = self.arg(f"p_{ident(node.id)}_ptr", node.host or "")
        if node.kind == "scalar":
            return self.local(node.id, f"tl.load({pointer}).to(tl.float32)")
        space = self.space(cols)
        stride = self.arg(f"p_{ident(node.id)}_stride", f"{node.host}.stride(-1)")
        suffix = "" if cols == self.phase.domain else f"_{ident(cols)}"
        return self.local(node.id, f"tl.load({pointer} + {space.offs} * {stride}, mask={space.mask}, "
                                   "other=0.0).to(tl.float32)", suffix)

    def _load(self, node: Node) -> str:
        if node.id not in self.phase.loads:
            raise EmitError(f"`{node.id}` is computed by another launch and not stored")
        space = self.space(node.cols)
        name = ident(node.id)
        if node.op == "input":
            pointer = self.arg(f"{name}_ptr", node.host or "")
            sm = self.arg(f"stride_{name}_m", f"{node.host}.stride(0)")
            sc = self.arg(f"stride_{name}_c", f"{node.host}.stride(1)")
        else:
            pointer = self.arg(f"t_{name}_ptr", self.host.stored(node.id))
            sm, sc = space.count, "1"
        address = f"{pointer} + offs_m[:, None] * {sm} + {space.offs}[None, :]" + (f" * {sc}" if sc != "1" else "")
        return self.local(node.id, f"tl.load({address}, mask={space.mask2d}, other=0.0).to(tl.float32)")

    # ------------------------------------------------------------------ sinks

    def store(self, node_id: str, pointer: str, dtype: str, stride_m: str, stride_c: str) -> None:
        node = self.plan.node(node_id)
        space = self.space(node.cols)
        value = self.value(node_id, node.cols)
        address = f"{pointer} + offs_m[:, None] * {stride_m} + {space.offs}[None, :]" + (
            f" * {stride_c}" if stride_c != "1" else "")
        self.emit(f"tl.store({address}, {value}.to({dtype}), mask={space.mask2d})")

    def sinks(self) -> None:
        """Partials, stored values and the output this phase owes, in that order."""
        for stat in self.phase.partials:
            stats.write_partials(self, stat)
        for node_id in self.phase.stores:
            pointer = self.arg(f"t_{ident(node_id)}_ptr", self.host.stored(node_id))
            dtype = f"{pointer}.dtype.element_ty"
            self.store(node_id, pointer, dtype, self.space(self.plan.node(node_id).cols).count, "1")
        if not self.phase.output:
            return
        out = self.arg("out_ptr", "out")
        som = self.arg("stride_out_m", "out.stride(0)")
        output = self.plan.graph.output
        if self.plan.node(output).kind == "row":
            value = self.value(output, "")
            self.emit(f"tl.store({out} + offs_m * {som}, {value}.to({out}.dtype.element_ty), mask=mask_m)")
            return
        soc = self.arg("stride_out_c", "out.stride(1)")
        self.store(output, out, f"{out}.dtype.element_ty", som, soc)
