"""torch.fx graph of the reference -> general-path steps (child side: it needs torch and the live model).

Each fx node becomes a step (models.py). Module calls become launcher calls whose hyperparameters
are host expressions over the module (`self.conv.stride`), so a model built with other constructor
arguments is served as it is; scalar attributes the tracer proxied (`self.scaling_factor`) stay
host values too. What the converter cannot express raises Unsupported naming the construct.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from xe_forge.proposers.fusion.ops import MODULES as ACTIVATION_MODULES
from xe_forge.proposers.lower.general import optable as t
from xe_forge.proposers.lower.general.models import Arg, GeneralGraph, Step

OPERATOR_UNARY = {operator.neg: "neg", operator.abs: "abs", operator.invert: "logical_not",
                  operator.not_: "logical_not"}


class Unsupported(Exception):  # noqa: N818 - a refusal, not an error
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class ReduceTuple:
    """`torch.max(x, dim)`: (values, indices); the values are a step, the indices are refused."""

    values: Arg


def module_expr(path: str) -> str:
    """`block.0.conv` -> `self.block[0].conv`."""
    out = "self"
    for part in path.split("."):
        out += f"[{part}]" if part.isdigit() else f".{part}"
    return out


def call_name(target: Any) -> str:
    return target if isinstance(target, str) else getattr(target, "__name__", str(target))


class Handlers:
    """The converters of calls and modules, registered by the modules that define them (functions.py,
    modules.py), which build on Converter: convert.py never imports them back."""

    def __init__(self) -> None:
        self._table: dict[str, Any] = {}

    def register(self, **handlers: Any) -> None:
        self._table.update(handlers)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_table"][name]
        except KeyError:
            raise AttributeError(f"no converter `{name}` registered (import general.functions and general.modules)") \
                from None


HANDLERS = Handlers()


class Converter:
    def __init__(self, gm: torch.fx.GraphModule, model: torch.nn.Module) -> None:
        self.gm, self.model = gm, model
        self.steps: list[Step] = []
        self.values: dict[str, Any] = {}
        self.inputs: list[str] = []
        self.extern: set[str] = set()
        self.notes: list[str] = []
        self.numbers: set[str] = set()  # fx nodes that were 0-d tensors of a number (torch.tensor(0.5))

    # ---------------------------------------------------------------- plumbing

    def run(self) -> GeneralGraph:
        for node in self.gm.graph.nodes:
            self.values[node.name] = getattr(self, f"on_{node.op}")(node)
        index = {s.id: s for s in self.steps}
        for step in self.steps:
            for ref in refs_of(step):
                if ref in index and step.id not in index[ref].users:
                    index[ref].users.append(step.id)
        return GeneralGraph(inputs=self.inputs, steps=self.steps, extern=sorted(self.extern), notes=self.notes)

    def new(self, kind: str, op: str, node: torch.fx.Node | None, args: list[Arg], **extra: Any) -> Arg:
        step = Step(id=f"xv{len(self.steps)}", kind=kind, op=op, args=args, **extra)
        meta = node.meta.get("tensor_meta") if node is not None else None
        if meta is not None and hasattr(meta, "shape"):
            step.tensor, step.shape, step.dtype = True, [int(v) for v in meta.shape], str(meta.dtype)
        self.steps.append(step)
        return Arg(kind="ref", value=step.id)

    def arg(self, value: Any) -> Arg:
        if isinstance(value, Arg):  # converted already (an intermediate step this converter made)
            return value
        if isinstance(value, torch.fx.Node):
            got = self.values[value.name]
            if isinstance(got, ReduceTuple):
                raise Unsupported(f"`{value.name}` (values and indices of a max/min) used as a whole")
            return got
        if value is None or isinstance(value, bool | int | float | str):
            return Arg(kind="lit", value=value)
        if isinstance(value, torch.dtype):
            return Arg(kind="dtype", value=str(value))
        if isinstance(value, list | tuple | torch.Size):
            return Arg(kind="list" if isinstance(value, list) else "tuple", value=[self.arg(v) for v in value])
        if isinstance(value, slice):
            return Arg(kind="slice", value=[self.arg(v) for v in (value.start, value.stop, value.step)])
        if value is Ellipsis:
            return Arg(kind="ellipsis")
        if isinstance(value, torch.memory_format):
            return Arg(kind="host", value=str(value))
        raise Unsupported(f"an argument of type {type(value).__name__} ({str(value)[:60]})")

    def is_tensor(self, value: Any) -> bool:
        if isinstance(value, Arg):
            return value.kind == "ref" and self.step(value.value).tensor
        if not isinstance(value, torch.fx.Node):
            return False
        got = self.values.get(value.name)
        if isinstance(got, Arg) and got.kind == "ref":
            return self.step(got.value).tensor
        return False

    def step(self, step_id: str) -> Step:
        return next(s for s in reversed(self.steps) if s.id == step_id)

    # ---------------------------------------------------------------- nodes

    def on_placeholder(self, node: torch.fx.Node) -> Arg:
        self.inputs.append(str(node.target))
        meta = node.meta.get("tensor_meta")
        step = Step(id=str(node.target), kind="input", op=str(node.target))
        if meta is not None and hasattr(meta, "shape"):
            step.tensor, step.shape, step.dtype = True, [int(v) for v in meta.shape], str(meta.dtype)
        self.steps.append(step)
        return Arg(kind="ref", value=step.id)

    def on_get_attr(self, node: torch.fx.Node) -> Arg:
        target = str(node.target)
        owner: Any = self.model
        for part in target.split("."):
            owner = getattr(owner, part, _MISSING)
            if owner is _MISSING:
                break
        if owner is _MISSING or target.startswith("_tensor_constant"):  # built in forward: torch.tensor(0.5)
            value = getattr(self.gm, target)
            if torch.is_tensor(value) and value.dim() == 0:
                self.numbers.add(node.name)
                return Arg(kind="lit", value=value.item())
            raise Unsupported(f"a tensor constant of shape {list(value.shape)} built in forward")
        return self.new("host", module_expr(target), node, [])

    def on_output(self, node: torch.fx.Node) -> Arg:
        return self.new("output", "", None, [self.arg(node.args[0])])

    def on_call_module(self, node: torch.fx.Node) -> Any:
        return HANDLERS.convert_module(self, node, self.gm.get_submodule(str(node.target)), module_expr(str(node.target)))

    def on_call_function(self, node: torch.fx.Node) -> Any:
        return self.call(node, call_name(node.target), method=False)

    def on_call_method(self, node: torch.fx.Node) -> Any:
        return self.call(node, str(node.target), method=True)

    # ---------------------------------------------------------------- calls

    def call(self, node: torch.fx.Node, name: str, *, method: bool) -> Any:
        f = HANDLERS
        target, args, kwargs = node.target, list(node.args), dict(node.kwargs)
        if target is operator.getitem:
            return f.getitem(self, node, args)
        if target is getattr:
            return f.attribute(self, node, args)
        if target in OPERATOR_UNARY:
            if self.is_tensor(args[0]):
                return self.pointwise(node, OPERATOR_UNARY[target], [args[0]])
            return self.new("operator", call_name(target), node, [self.arg(args[0])])
        if target is operator.pos:
            return self.arg(args[0])
        if name in ("matmul", "mm", "bmm") or target is operator.matmul:
            return self.new("call", "xfg_matmul", node, [self.arg(args[0]), self.arg(args[1])])
        if name in ("max", "min") and (len(args) > 1 or "other" in kwargs or "dim" in kwargs):
            other = kwargs.get("other", args[1] if len(args) > 1 else None)
            number = isinstance(other, torch.fx.Node) and other.name in self.numbers  # torch.tensor(0.5)
            if self.is_tensor(other) or number:
                return self.pointwise(node, "maximum" if name == "max" else "minimum", [args[0], other])
        base = name[:-1] if name.endswith("_") and name not in ("and_", "or_") else name
        if base in t.BINARY:
            return f.binary(self, node, base, args, kwargs, inplace=base != name or name in t.INPLACE_OPERATORS)
        if name in t.REDUCTIONS:
            return f.reduction(self, node, name, args, kwargs)
        if name in t.UNARY or (name.endswith("_") and name[:-1] in t.UNARY):
            return f.unary(self, node, name, args, kwargs)
        if name in t.CALLS:
            return f.library(self, node, name, args, kwargs)
        if name == "where" and len(args) + len(kwargs) == 3:
            return self.pointwise(node, "where", [kwargs.get("condition", args[0] if args else None),
                                                  kwargs.get("input", args[1] if len(args) > 1 else None),
                                                  kwargs.get("other", args[2] if len(args) > 2 else None)])
        if name == "masked_fill":
            return self.pointwise(node, "where", [args[1], args[2], args[0]])
        if name in t.ALIASES:
            return self.arg(args[0])
        if name == "tensor" and not method and args and not self.is_tensor(args[0]):
            data = self.arg(args[0])  # torch.tensor(0.5, device=x.device): a number where pointwise ops use it
            if data.kind in ("lit", "host") or (data.kind == "ref" and not self.step(data.value).tensor):
                self.numbers.add(node.name)
                return data
        if (method and name in t.METHODS) or (not method and name in t.FUNCTIONS):
            if any(self.is_tensor(a) for a in args[1:] + list(kwargs.values())) and name not in (
                    "cat", "concat", "concatenate", "stack", "expand_as", "view_as", "reshape_as", "type_as",
                    "zeros_like", "ones_like", "full_like", "empty_like", "broadcast_to"):
                raise Unsupported(f"`{name}` with a tensor argument")
            return self.new("method" if method else "function", name, node, [self.arg(a) for a in args],
                            kwargs={k: self.arg(v) for k, v in kwargs.items()})
        what = "method" if method else "function"
        raise Unsupported(f"{what} `{name}` is not an op the general path knows")

    def pointwise(self, node: torch.fx.Node, op: str, operands: list[Any], params: dict[str, Any] | None = None,
                  attrs: dict[str, Any] | None = None, inplace: bool = False) -> Arg:
        """A pointwise step; an in-place op writes into its first operand (which must be a tensor)."""
        if inplace and not self.is_tensor(operands[0]):
            raise Unsupported(f"in-place `{op}` on a value that is not a tensor")
        return self.new("pointwise", op, node, [self.arg(a) for a in operands],
                        params={k: self.param(v, op) for k, v in (params or {}).items()}, attrs=attrs or {},
                        inplace=inplace)

    def param(self, value: Any, op: str) -> Arg:
        if self.is_tensor(value):
            raise Unsupported(f"`{op}` with a tensor hyperparameter")
        return self.arg(value)

    def module_arg(self, module: torch.nn.Module, m: str, entry: str) -> Arg | None:
        """One launcher argument of a module call: a module attribute, an expression over it, a literal."""
        if entry.isidentifier() and entry not in ("True", "False", "None"):
            return Arg(kind="host", value=f"{m}.{entry}") if hasattr(module, entry) else None
        if "{m}" in entry:
            return Arg(kind="host", value=entry.format(m=m))
        return Arg(kind="lit", value=ast.literal_eval(entry))


class _Missing:
    pass


_MISSING = _Missing()


def refs_of(step: Step) -> list[str]:
    out: list[str] = []

    def walk(arg: Arg) -> None:
        if arg.kind == "ref":
            out.append(arg.value)
        elif arg.kind in ("list", "tuple", "slice"):
            for a in arg.value:
                walk(a)

    for a in [*step.args, *step.kwargs.values(), *step.params.values()]:
        walk(a)
    return out


__all__ = ["ACTIVATION_MODULES", "Converter", "ReduceTuple", "Unsupported", "module_expr", "refs_of"]
