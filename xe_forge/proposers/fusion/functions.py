"""fx `call_function` / `call_method` nodes -> fusion graph values (see convert.py for the value kinds)."""

from __future__ import annotations

import operator
from typing import Any

import torch.fx

from xe_forge.proposers.fusion import ops
from xe_forge.proposers.fusion.convert import (
    HANDLERS,
    Converter,
    Matrix,
    ReduceTuple,
    Unsqueezed,
    Unsupported,
)
from xe_forge.proposers.fusion.ir import Node, Operand


def convert_call(conv: Converter, fx_node: torch.fx.Node, name: str, *, method: bool) -> Any:
    args = [conv.arg(a) for a in fx_node.args]
    kwargs = {k: conv.arg(v) for k, v in fx_node.kwargs.items()}
    what = f"{'method' if method else 'function'} `{name}`"
    if not method and fx_node.target in ops.BINARY_FUNCTIONS:
        return binary(conv, fx_node, ops.BINARY_FUNCTIONS[fx_node.target], args)
    if fx_node.target is operator.matmul or name in ("matmul", "mm"):
        return conv.gemm(fx_node, args[0], _matrix(args[1], what))
    if fx_node.target is operator.getitem:
        return _getitem(args, what)
    if name == "getattr":
        return _getattr(conv, args)
    if fx_node.target is operator.neg:
        return conv.new(fx_node, "neg", [conv.operand(args[0], what)])
    if fx_node.target is operator.pow or name == "pow":
        return _pow(conv, fx_node, args, what)
    if name in ("t", "transpose", "permute") and isinstance(args[0], Matrix):
        return Matrix(args[0].host, not args[0].transposed)
    if name == "linear":
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        return conv.gemm(fx_node, args[0], _matrix(args[1], what, transpose=True), bias_node=bias)
    if name == "addmm":
        return conv.gemm(fx_node, args[1], _matrix(args[2], what), bias_node=args[0])
    if name in ops.ALIASES:
        return conv.node_of(args[0], f"the input of {what}").id
    if name in ops.RESHAPES:
        return _reshape(conv, fx_node, name, args, kwargs)
    if name in ("max", "min") and len(args) > 1 and not isinstance(args[1], int | list | tuple):
        return binary(conv, fx_node, "maximum" if name == "max" else "minimum", args)
    if name in ops.BINARY_NAMES:
        return binary(conv, fx_node, ops.BINARY_NAMES[name], args)
    if name in ops.REDUCTIONS:
        return reduction(conv, fx_node, name, args, kwargs)
    if name in ops.ELEMENTWISE:
        op, keys, defaults = ops.ELEMENTWISE[name]
        scalars = _scalars(conv, keys, defaults, args[1:], kwargs, what)
        return unary(conv, fx_node, op, args[0], scalars, {k: kwargs.get(k, v) for k, v in defaults.items()
                                                           if isinstance(v, str)})
    if name in ("softmax", "log_softmax"):
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        return softmax(conv, fx_node, name, args[0], dim)
    if name == "dropout":
        p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
        training = kwargs.get("training", args[2] if len(args) > 2 else True)
        return dropout(conv, args[0], float(p), bool(training), what)
    for functional in HANDLERS.functional:  # norms and pools in functional form (modules.py)
        found = functional(conv, fx_node, name, args, kwargs)
        if found is not None:
            return found
    raise Unsupported(f"{what} is not an op the fusion generator knows")


def _matrix(value: Any, what: str, *, transpose: bool = False) -> Matrix:
    if not isinstance(value, Matrix):
        raise Unsupported(f"{what} multiplies by something that is not a 2-D parameter of the model "
                          "(a GEMM against an activation is not supported)")
    return Matrix(value.host, value.transposed != transpose)


def _getitem(args: list[Any], what: str) -> Any:
    if isinstance(args[0], ReduceTuple) and args[1] == 0:
        return args[0].node
    raise Unsupported(f"{what} indexes something other than the values of a max/min reduction")


def _getattr(conv: Converter, args: list[Any]) -> Any:
    value, attr = args
    if isinstance(value, ReduceTuple) and attr == "values":
        return value.node
    if isinstance(value, Matrix) and attr in ("T", "mT"):
        return Matrix(value.host, not value.transposed)
    raise Unsupported(f"attribute `.{attr}` of a traced value is not supported")


def binary(conv: Converter, fx_node: torch.fx.Node, op: str, args: list[Any]) -> str:
    what = f"`{op}`"
    left, right = conv.operand(args[0], what), conv.operand(args[1], what)
    if op == "rsub":
        op, left, right = "sub", right, left
    return conv.new(fx_node, op, [left, right])


def unary(conv: Converter, fx_node: torch.fx.Node, op: str, value: Any, scalars: dict[str, Operand],
          attrs: dict[str, Any] | None = None) -> str:
    x = conv.operand(value, f"the input of `{op}`")
    kind, cols = conv.join([x], op)
    return conv.add(Node(id=fx_node.name, op=op, args=[x], scalars=scalars, attrs=attrs or {}, kind=kind,
                         cols=cols, shape=conv.shape(fx_node)))


def _scalars(conv: Converter, keys: dict[str, str], defaults: dict[str, Any], positional: list[Any],
             kwargs: dict[str, Any], what: str) -> dict[str, Operand]:
    values = dict(zip(keys, positional, strict=False)) | {k: v for k, v in kwargs.items() if k in keys}
    out: dict[str, Operand] = {}
    for key, attr in keys.items():
        value = values.get(key, defaults.get(attr))
        if isinstance(value, str) or value is None:
            continue
        if not isinstance(value, int | float):
            raise Unsupported(f"{what} takes `{key}` as a tensor; only numbers are supported")
        out[attr] = conv.operand(value, what)
    return out


def _pow(conv: Converter, fx_node: torch.fx.Node, args: list[Any], what: str) -> str:
    if not isinstance(args[1], int | float) or float(args[1]) not in (0.5, 1.0, 2.0, 3.0, -0.5, -1.0, -2.0):
        raise Unsupported(f"{what} with exponent {args[1]!r}; exponents 0.5, 1, 2, 3, -0.5, -1, -2 are supported")
    return unary(conv, fx_node, "pow", args[0], {"exponent": Operand(value=float(args[1]))})


def _dim(value: Any, rank: int, what: str) -> int:
    if isinstance(value, list | tuple):
        if len(value) != 1:
            raise Unsupported(f"{what} over dims {list(value)}; one dim is supported")
        value = value[0]
    if not isinstance(value, int):
        raise Unsupported(f"{what} without a dim reduces everything to one number; per-row reductions are supported")
    return value + rank if value < 0 else value


def reduction(conv: Converter, fx_node: torch.fx.Node, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    what = f"`{name}`"
    x = conv.node_of(args[0], f"the input of {what}")
    dim = _dim(kwargs.get("dim", args[1] if len(args) > 1 else None), len(x.shape) or 2, what)
    keepdim = bool(kwargs.get("keepdim", args[2] if len(args) > 2 else False))
    op = ops.REDUCTIONS[name]
    if x.kind == "row" and dim == 1:
        if op in ("var", "std"):
            raise Unsupported(f"{what} over a size-1 dim (NaN with the unbiased estimator)")
        node = x.id  # reducing a size-1 dim leaves the value as it is
    elif x.kind == "full" and dim == 1:
        correction = kwargs.get("correction", 1 if kwargs.get("unbiased", True) else 0)
        attrs = {"keepdim": keepdim} | ({"correction": int(correction)} if op in ("var", "std") else {})
        node = conv.add(Node(id=fx_node.name, op=op, args=[Operand(ref=x.id)], attrs=attrs, kind="row",
                             shape=conv.shape(fx_node)))
    else:
        raise Unsupported(f"{what} over dim {dim} of a {x.kind} value of shape {x.shape}; reductions over the "
                          "columns (dim 1) of a GEMM output are supported")
    return ReduceTuple(node) if name in ("max", "min") else node  # torch.max(x, dim) is (values, indices)


def softmax(conv: Converter, fx_node: torch.fx.Node, name: str, value: Any, dim: Any) -> str:
    x = conv.node_of(value, f"the input of `{name}`")
    d = _dim(dim, len(x.shape) or 2, f"`{name}`")
    if d != 1:
        raise Unsupported(f"`{name}` over dim {d}; softmax over the columns (dim 1) is supported")
    if x.kind == "row":  # softmax over a size-1 dim is 1, log_softmax 0
        return conv.add(Node(id=fx_node.name, op="fill", args=[Operand(ref=x.id)], kind="row",
                             scalars={"value": Operand(value=1.0 if name == "softmax" else 0.0)}))
    if x.kind != "full":
        raise Unsupported(f"`{name}` of a {x.kind} value")
    return conv.add(Node(id=fx_node.name, op=name, args=[Operand(ref=x.id)], kind="full", cols=x.cols,
                         shape=conv.shape(fx_node)))


def dropout(conv: Converter, value: Any, p: float, training: bool, what: str) -> str:
    if training and p > 0:
        raise Unsupported(f"{what} with p={p} in training mode draws random masks; its output cannot be matched")
    return conv.node_of(value, f"the input of {what}").id


def _reshape(conv: Converter, fx_node: torch.fx.Node, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    value = args[0]
    rest = [a for a in args[1:]] + list(kwargs.values())
    if isinstance(value, Unsqueezed):
        if name == "squeeze" and rest in ([1], [], [-2]):
            return value.node
        raise Unsupported(f"`{name}` of an unsqueezed value; only the unsqueeze(1)-pool-squeeze(1) form is supported")
    x = conv.node_of(value, f"the input of `{name}`")
    if x.kind == "full" and name == "unsqueeze" and rest in ([1], [-2]):
        return Unsqueezed(x.id)
    out_shape = conv.shape(fx_node)
    if x.kind == "row" and len(out_shape) in (1, 2) and (len(out_shape) == 1 or out_shape[1] == 1):
        return x.id  # [M, 1] <-> [M]: the same per-row values
    if x.kind == "full" and out_shape == x.shape:
        return x.id
    raise Unsupported(f"call_method `{name}` reshapes a {x.kind} value of shape {x.shape} to {out_shape}")


HANDLERS.call = convert_call
