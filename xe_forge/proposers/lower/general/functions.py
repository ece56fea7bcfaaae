"""fx call_function / call_method nodes -> steps: arithmetic, activations, reductions, launcher calls, indexing."""

from __future__ import annotations

from typing import Any

import torch.fx

from xe_forge.proposers.lower.general import optable as t
from xe_forge.proposers.lower.general.convert import HANDLERS, Converter, ReduceTuple, Unsupported
from xe_forge.proposers.lower.general.models import Arg


def bind(args: list[Any], kwargs: dict[str, Any], names: list[str], defaults: dict[str, Any],
         aliases: dict[str, str] | None = None) -> dict[str, Any]:
    """Positional arguments after the input by name, keywords over them, defaults for the rest."""
    bound = dict(defaults)
    bound.update(dict(zip(names, args[1:], strict=False)))
    for key, value in kwargs.items():
        bound[(aliases or {}).get(key, key)] = value
    return bound


def binary(conv: Converter, node: torch.fx.Node, name: str, args: list[Any], kwargs: dict[str, Any], *,
           inplace: bool) -> Arg:
    a = kwargs.get("input", args[0] if args else None)
    b = kwargs.get("other", args[1] if len(args) > 1 else kwargs.get("exponent"))
    op = t.BINARY[name]
    if not (conv.is_tensor(a) or conv.is_tensor(b)):
        return conv.new("operator", name, node, [conv.arg(a), conv.arg(b)])
    alpha = kwargs.get("alpha", 1)
    if op in ("add", "sub", "rsub") and alpha != 1:
        b = _scaled(conv, node, b, alpha)
    if op == "rsub":
        op, a, b = "sub", b, a
    if op == "div" and kwargs.get("rounding_mode") is not None:
        mode = kwargs["rounding_mode"]
        if mode == "floor":
            op = "floordiv"
        elif mode == "trunc":
            quotient = conv.pointwise(node, "div", [a, b])
            return conv.pointwise(node, "trunc", [quotient])
    return conv.pointwise(node, op, [a, b], inplace=inplace and conv.is_tensor(a))


def _scaled(conv: Converter, node: torch.fx.Node, value: Any, alpha: Any) -> Arg:
    """`alpha * value` as its own step (torch.add's alpha)."""
    if not conv.is_tensor(value):
        raise Unsupported("torch.add/sub with alpha on a scalar")
    return conv.pointwise(node, "mul", [value, alpha])


def unary(conv: Converter, node: torch.fx.Node, name: str, args: list[Any], kwargs: dict[str, Any]) -> Arg:
    inplace = name.endswith("_") and name[:-1] in t.UNARY
    op, names, defaults = t.UNARY[name[:-1] if inplace else name]
    bound = bind(args, kwargs, names, defaults)
    inplace = inplace or bool(bound.pop("inplace", False))
    x = kwargs.get("input", args[0])
    if op == "clamp":
        lo, hi = bound.get("min"), bound.get("max")
        if conv.is_tensor(lo) or conv.is_tensor(hi):  # tensor bounds: maximum, then minimum
            out: Any = x
            if lo is not None:
                out = conv.pointwise(node, "maximum", [out, lo])
            if hi is not None:
                out = conv.pointwise(node, "minimum", [out, hi])
            return conv.arg(out)
        return conv.pointwise(node, "hardtanh", [x], params={"min": lo, "max": hi}, inplace=inplace)
    static = {k: bound.pop(k) for k in list(bound) if k in t.STATIC_PARAMS}
    params = {t.PARAM_NAMES.get(k, k): v for k, v in bound.items()}
    return conv.pointwise(node, op, [x], params=params, attrs=static, inplace=inplace)


def reduction(conv: Converter, node: torch.fx.Node, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    x = kwargs.get("input", args[0])
    op = t.REDUCTIONS[name]
    if name in ("var", "std"):
        rest = args[1:]
        dim = kwargs.get("dim", rest[0] if rest and not isinstance(rest[0], bool) else None)
        if rest and isinstance(rest[0], bool):  # var(x, unbiased)
            rest = [None, *rest]
        unbiased = kwargs.get("unbiased", rest[1] if len(rest) > 1 and isinstance(rest[1], bool) else None)
        keepdim = kwargs.get("keepdim", rest[2] if len(rest) > 2 else False)
        correction = kwargs.get("correction", 1 if unbiased is None else int(bool(unbiased)))
        extra = {"correction": correction}
    else:
        bound = bind(args, kwargs, ["dim", "keepdim", "dtype"], {"dim": None, "keepdim": False, "dtype": None})
        dim, keepdim, extra = bound["dim"], bound["keepdim"], {}
        if bound.get("dtype") is not None:
            extra["dtype"] = bound["dtype"]
    if conv.is_tensor(dim):
        raise Unsupported(f"`{name}` over dims given as a tensor")
    kw = {"dim": dim, "keepdim": keepdim, "op": op, **extra}
    ref = conv.new("call", "xfg_reduce", node, [conv.arg(x)], kwargs={k: conv.arg(v) for k, v in kw.items()})
    if name in ("max", "min") and dim is not None:  # (values, indices)
        step = conv.steps[-1]
        meta = node.meta.get("tensor_meta")
        first = meta[0] if isinstance(meta, tuple | list) and meta else None
        if first is not None and hasattr(first, "shape"):
            step.tensor, step.shape, step.dtype = True, [int(v) for v in first.shape], str(first.dtype)
        return ReduceTuple(ref)
    return ref


def library(conv: Converter, node: torch.fx.Node, name: str, args: list[Any], kwargs: dict[str, Any]) -> Arg:
    launcher, names, defaults = t.CALLS[name]
    bound = bind(args, kwargs, names, defaults, t.CALL_ALIASES)
    x = kwargs.get("input", args[0] if args else None)
    if bound.pop("return_indices", False):
        raise Unsupported(f"`{name}` with return_indices=True")
    bound.pop("inplace", None)
    bound.pop("_stacklevel", None)
    lead: list[Any] = [x]
    if "pool" in name:
        lead.append(int(name[-2]))
        if "adaptive" in name:
            bound["is_max"] = "max" in name
    if name in ("softmax", "log_softmax"):
        if bound["dim"] is None:
            rank = len(conv.step(conv.arg(x).value).shape)
            bound["dim"] = 0 if rank in (0, 1, 3) else 1  # torch's legacy implicit dim
        bound["log"] = name == "log_softmax"
    for key in list(bound):
        if conv.is_tensor(bound[key]) and key not in ("weight", "bias", "other", "mat2", "mat1", "batch1", "batch2",
                                                      "running_mean", "running_var"):
            raise Unsupported(f"`{name}` with `{key}` given as a tensor")
    return conv.new("call", launcher, node, [conv.arg(v) for v in lead],
                    kwargs={k: conv.arg(v) for k, v in bound.items()})


def getitem(conv: Converter, node: torch.fx.Node, args: list[Any]) -> Any:
    source = conv.values.get(args[0].name) if isinstance(args[0], torch.fx.Node) else None
    if isinstance(source, ReduceTuple):
        if args[1] == 0:
            return source.values
        raise Unsupported("the indices of a max/min reduction")
    index = args[1]
    parts = index if isinstance(index, tuple | list) else [index]
    if conv.is_tensor(args[0]) and any(conv.is_tensor(p) for p in parts):
        raise Unsupported("indexing a tensor with a tensor (a gather)")
    return conv.new("getitem", "", node, [conv.arg(args[0]), conv.arg(index)])


def attribute(conv: Converter, node: torch.fx.Node, args: list[Any]) -> Any:
    owner, name = args[0], args[1]
    source = conv.values.get(owner.name) if isinstance(owner, torch.fx.Node) else None
    if isinstance(source, ReduceTuple):
        if name == "values":
            return source.values
        raise Unsupported(f"`.{name}` of a max/min reduction")
    if name == "data":
        return conv.arg(owner)
    if name not in t.ATTRIBUTES:
        raise Unsupported(f"attribute `.{name}` of a traced value")
    return conv.new("getattr", name, node, [conv.arg(owner)])


HANDLERS.register(binary=binary, unary=unary, reduction=reduction, library=library, getitem=getitem,
                  attribute=attribute)
