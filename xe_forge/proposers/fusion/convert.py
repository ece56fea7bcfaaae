"""torch.fx graph of the reference -> the fusion graph (ir.Graph), or a refusal naming the construct.

Runs inside the tracing subprocess (it needs torch and the reference's module objects). Every fx
node becomes a value: a graph node (with a broadcast kind, see ir.py), a literal, a weight matrix
waiting for its GEMM, or a reduction tuple waiting for `.values`. Anything else raises Unsupported
with a message that names the construct, e.g. "call_method `view` reshapes a full value".

What each fx call means is not known here: functions.py (calls and methods) and modules.py (nn
modules, and the functional forms of norms and pools) register their converters in HANDLERS, and
whoever converts imports them first (trace.py), so neither this module nor they import back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from xe_forge.proposers.fusion import ops
from xe_forge.proposers.fusion.ir import Graph, Node, Operand


class Unsupported(Exception):  # noqa: N818 - a refusal, not an error
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Matrix:
    """A 2-D parameter on its way to a GEMM; `transposed` once `.T` / `.t()` was applied."""

    host: str
    transposed: bool


@dataclass
class Unsqueezed:
    """A full value with a size-1 dim inserted at 1 (the way KernelBench feeds 1-D pooling)."""

    node: str


@dataclass
class ReduceTuple:
    """`torch.max(x, dim)`: values are usable, indices are not."""

    node: str


@dataclass
class Handlers:
    """What each kind of fx node converts with, filled by the modules that know (see above)."""

    module: Callable[..., Any] | None = None
    """(conv, fx_node, module) -> value, for call_module nodes."""
    call: Callable[..., Any] | None = None
    """(conv, fx_node, name, method=) -> value, for call_function and call_method nodes."""
    functional: list[Callable[..., Any]] = field(default_factory=list)
    """(conv, fx_node, name, args, kwargs) -> value or None: tried for calls `call` does not know."""

    def need(self, handler: Callable[..., Any] | None, kind: str) -> Callable[..., Any]:
        if handler is None:
            raise RuntimeError(f"no converter registered for {kind} nodes (import fusion.functions and fusion.modules)")
        return handler


HANDLERS = Handlers()


class Converter:
    def __init__(self, gm: torch.fx.GraphModule, model: torch.nn.Module) -> None:
        self.gm, self.model = gm, model
        self.nodes: dict[str, Node] = {}
        self.values: dict[str, Any] = {}
        self.inputs: list[str] = []
        self.attr_of: dict[float, list[str]] = {}
        for name, value in vars(model).items():
            if isinstance(value, int | float) and not isinstance(value, bool) and not name.startswith("_"):
                self.attr_of.setdefault(float(value), []).append(f"self.{name}")

    # ---------------------------------------------------------------- helpers

    def add(self, node: Node) -> str:
        self.nodes[node.id] = node
        return node.id

    def node_of(self, value: Any, what: str) -> Node:
        if isinstance(value, str) and value in self.nodes:
            return self.nodes[value]
        raise Unsupported(f"{what} is not a tensor the epilogue computes ({type(value).__name__})")

    def operand(self, value: Any, what: str) -> Operand:
        if isinstance(value, bool):
            raise Unsupported(f"{what} is a bool")
        if isinstance(value, int | float):
            hosts = self.attr_of.get(float(value), [])
            return Operand(value=float(value), host=hosts[0] if len(hosts) == 1 else None)
        return Operand(ref=self.node_of(value, what).id)

    def arg(self, fx_arg: Any) -> Any:
        if isinstance(fx_arg, torch.fx.Node):
            return self.values[fx_arg.name]
        if isinstance(fx_arg, list | tuple):
            return type(fx_arg)(self.arg(a) for a in fx_arg)
        return fx_arg

    def shape(self, fx_node: torch.fx.Node) -> list[int]:
        meta = fx_node.meta.get("tensor_meta")
        return list(meta.shape) if meta is not None and hasattr(meta, "shape") else []

    def join(self, args: list[Operand], op: str) -> tuple[str, str]:
        """Broadcast kind and column space of an elementwise op's result."""
        kinds = [(self.nodes[a.ref].kind, self.nodes[a.ref].cols) for a in args if a.ref]
        fulls = {c for k, c in kinds if k == "full"}
        if len(fulls) > 1:
            raise Unsupported(f"`{op}` combines full values of different column spaces ({', '.join(sorted(fulls))})")
        if fulls:
            return "full", fulls.pop()
        present = {k for k, _ in kinds}
        if {"row", "col"} <= present:
            raise Unsupported(f"`{op}` broadcasts a per-row value against a per-column vector (an outer product)")
        for kind in ("row", "col"):
            if kind in present:
                return kind, ""
        return "scalar", ""

    def new(self, fx_node: torch.fx.Node, op: str, args: list[Operand], attrs: dict | None = None) -> str:
        kind, cols = self.join(args, op)
        return self.add(Node(id=fx_node.name, op=op, args=args, attrs=attrs or {}, kind=kind, cols=cols,
                             shape=self.shape(fx_node)))

    # ---------------------------------------------------------------- nodes

    def run(self) -> Graph:
        output = None
        for fx_node in self.gm.graph.nodes:
            if fx_node.op == "output":
                output = fx_node.args[0]
                continue
            self.values[fx_node.name] = getattr(self, f"on_{fx_node.op}")(fx_node)
        if not isinstance(output, torch.fx.Node):
            raise Unsupported("forward returns a tuple or a constant; one output tensor is supported")
        result = self.node_of(self.values[output.name], "the output")
        if not any(n.op == "gemm" for n in self.nodes.values()):
            raise Unsupported("the reference has no matrix multiply (nn.Linear, F.linear, torch.matmul, @)")
        if result.kind not in ("full", "row"):
            raise Unsupported(f"the output is a {result.kind} value; a full [M, N] or per-row output is supported")
        return Graph(inputs=self.inputs, nodes=_reachable(list(self.nodes.values()), result.id), output=result.id,
                     output_keepdim=len(self.shape(output)) == 2)

    def on_placeholder(self, fx_node: torch.fx.Node) -> str:
        self.inputs.append(fx_node.target)
        shape = self.shape(fx_node)
        if len(shape) != 2:
            raise Unsupported(f"forward input `{fx_node.target}` has shape {shape}; 2-D inputs [M, K] are supported")
        return self.add(Node(id=fx_node.name, op="input", kind="full", cols=f"in:{fx_node.target}",
                             host=str(fx_node.target), shape=shape))

    def on_get_attr(self, fx_node: torch.fx.Node) -> Any:
        tensor = self.gm.get_parameter(fx_node.target) if _is_param(self.gm, fx_node.target) else \
            self.gm.get_buffer(fx_node.target)
        host = f"self.{fx_node.target}"
        shape = list(tensor.shape)
        if tensor.numel() == 1:
            return self.add(Node(id=fx_node.name, op="param", kind="scalar", host=host, shape=shape))
        if len(shape) == 1 or (len(shape) == 2 and shape[0] == 1):
            return self.add(Node(id=fx_node.name, op="param", kind="col", host=host, shape=shape))
        if len(shape) == 2:
            return Matrix(host, transposed=False)
        raise Unsupported(f"parameter `{fx_node.target}` has shape {shape}; scalars, vectors over the columns and "
                          "2-D weights are supported")

    def on_call_module(self, fx_node: torch.fx.Node) -> Any:
        convert = HANDLERS.need(HANDLERS.module, "call_module")
        return convert(self, fx_node, self.gm.get_submodule(fx_node.target))

    def on_call_function(self, fx_node: torch.fx.Node) -> Any:
        return HANDLERS.need(HANDLERS.call, "call_function")(self, fx_node, ops.call_name(fx_node.target), method=False)

    def on_call_method(self, fx_node: torch.fx.Node) -> Any:
        return HANDLERS.need(HANDLERS.call, "call_method")(self, fx_node, fx_node.target, method=True)

    def gemm(self, fx_node: torch.fx.Node, a: Any, weight: Matrix, bias_host: str | None = None,
             bias_node: str | None = None) -> str:
        source = self.node_of(a, "the GEMM's left operand")
        if source.kind != "full":
            raise Unsupported(f"the GEMM's left operand `{source.id}` is a {source.kind} value, not a matrix")
        index = sum(1 for n in self.nodes.values() if n.op == "gemm")
        layout = "nk" if weight.transposed else "kn"
        out = self.add(Node(id=f"{fx_node.name}_mm" if bias_host or bias_node else fx_node.name, op="gemm",
                            args=[Operand(ref=source.id)], attrs={"weight": weight.host, "layout": layout},
                            kind="full", cols=f"g{index}", shape=self.shape(fx_node)))
        if bias_host is not None:
            bias_node = self.add(Node(id=f"{fx_node.name}_bias", op="param", kind="col", host=bias_host))
        if bias_node is None:
            return out
        return self.add(Node(id=fx_node.name, op="add", args=[Operand(ref=out), Operand(ref=bias_node)],
                             kind="full", cols=f"g{index}", shape=self.shape(fx_node)))


def _is_param(gm: torch.fx.GraphModule, target: str) -> bool:
    try:
        gm.get_parameter(target)
        return True
    except AttributeError:
        return False


def _reachable(nodes: list[Node], output: str) -> list[Node]:
    by_id = {n.id: n for n in nodes}
    keep: set[str] = set()
    pending = [output]
    while pending:
        current = pending.pop()
        if current in keep:
            continue
        keep.add(current)
        pending += [a.ref for a in by_id[current].args if a.ref]
    return [n for n in nodes if n.id in keep]
