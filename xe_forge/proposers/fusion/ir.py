"""What the traced PyTorch reference says the epilogue computes: a small dataflow graph after each GEMM.

The tracer (trace.py) turns the reference's torch.fx graph into these models and the planner
(plan.py) reads only them, so the code generator never looks at how the seed wrote its epilogue.
Every value is classified by how it broadcasts against a GEMM output [M, C]:

- `full`: one value per (row, column) of a column space (`cols`), e.g. the accumulator, a pooled
  accumulator, or a forward input of shape [M, K];
- `row`: one value per row ([M] or [M, 1]): what a row reduction leaves;
- `col`: one value per column ([C] or [1, C]): biases, affine weights, batch statistics;
- `scalar`: one value: literals, scalar parameters, module attributes such as a LeakyReLU slope.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Kind = Literal["full", "row", "col", "scalar"]

# Elementwise ops the emitter knows (expr.py), by arity.
UNARY = {
    "neg", "relu", "leaky_relu", "sigmoid", "tanh", "exp", "log", "abs", "sqrt", "rsqrt", "erf", "gelu",
    "silu", "mish", "softplus", "hardtanh", "hardsigmoid", "hardswish", "elu", "selu", "relu6", "square",
    "reciprocal", "logsigmoid", "softsign", "pow",
}
BINARY = {"add", "sub", "mul", "div", "maximum", "minimum"}
ROW_REDUCTIONS = {"sum", "mean", "max", "min", "logsumexp", "var"}
"""Reductions over the columns of a full value (dim 1), leaving a row value."""
NORMS = {"softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm"}
"""Ops that normalise a full value with statistics over a whole row, a group of columns, or (batch
norm in training mode) a whole column."""


class Operand(BaseModel):
    """An argument: another node, a literal, or a scalar the host reads at run time (`self.x.slope`)."""

    ref: str | None = None
    value: float | None = None
    host: str | None = None
    """A Python expression over `self` evaluated in forward; its float value is passed to the kernel."""


class Node(BaseModel):
    """One value of the epilogue graph."""

    id: str
    op: str
    """'input', 'param', 'gemm', an elementwise op (UNARY/BINARY), a reduction, a norm, 'pool'."""
    args: list[Operand] = Field(default_factory=list)
    attrs: dict[str, float | int | str | bool | None] = Field(default_factory=dict)
    """Static attributes: reduction `keepdim`, gelu `approximate`, pool `kernel`, norm `training`."""
    scalars: dict[str, Operand] = Field(default_factory=dict)
    """Numeric hyper-parameters (LeakyReLU slope, clamp bounds, eps, num_groups): a literal, and the
    host expression to read it from at run time when it came from the model."""
    kind: Kind
    cols: str = ""
    """Column space of a full value ('g0' for the first GEMM's output, 'g0/16' pooled, 'in:x'),
    of a col value (the full space it indexes), '' for row and scalar values."""
    host: str | None = None
    """For 'input' and 'param' nodes: the host expression of the tensor ('x', 'self.gemm.bias')."""
    shape: list[int] = Field(default_factory=list)
    """The traced shape, for messages and for the output's rank."""


class Graph(BaseModel):
    """The reference's forward as GEMMs plus epilogue nodes, in topological order."""

    inputs: list[str]
    """forward's parameter names, in order."""
    nodes: list[Node]
    output: str
    output_keepdim: bool = True
    """For a row output: whether it is [M, 1] (True) or [M] (False)."""

    def node(self, node_id: str) -> Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def gemms(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "gemm"]


class TraceResult(BaseModel):
    """The tracer's answer across the process boundary: a graph, or why there is none."""

    graph: Graph | None = None
    reason: str = ""
    """Why the reference cannot be fused, naming the construct (empty when graph is set)."""
    model_init: str = ""
    """Source of the reference Model's __init__ (the generated Model keeps its parameters and names)."""
    helpers: list[str] = Field(default_factory=list)
    """Module-level statements of the reference that __init__ needs (constants, imports)."""
