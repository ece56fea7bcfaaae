"""fx `call_module` nodes (nn.Linear, activations, norms, 1-D pooling) and their functional twins.

Numbers a module holds (a LeakyReLU slope, eps, num_groups) are read on the host at run time from the
same module (`self.gn.eps`), so a model built with other constructor arguments stays correct. A norm's
missing affine weight is the literal 1 and a missing bias 0: the emitter treats them like any scalar.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

from xe_forge.proposers.fusion import ops
from xe_forge.proposers.fusion.convert import HANDLERS, Converter, Matrix, Unsqueezed, Unsupported
from xe_forge.proposers.fusion.functions import dropout, softmax, unary
from xe_forge.proposers.fusion.ir import Node, Operand

ONE, ZERO = Operand(value=1.0), Operand(value=0.0)


def convert_module(conv: Converter, fx_node: torch.fx.Node, module: torch.nn.Module) -> Any:
    target = str(fx_node.target)
    kind = type(module).__name__
    what = f"nn.{kind} module `{target}`"
    args = [conv.arg(a) for a in fx_node.args]
    if isinstance(module, torch.nn.Linear):
        bias = f"self.{target}.bias" if module.bias is not None else None
        return conv.gemm(fx_node, args[0], Matrix(f"self.{target}.weight", transposed=True), bias_host=bias)
    if kind in ops.MODULES:
        op, attrs = ops.MODULES[kind]
        if op == "alias":
            return conv.node_of(args[0], what).id
        if op in ("softmax", "log_softmax"):
            return softmax(conv, fx_node, op, args[0], module.dim)
        scalars, static = {}, {}
        for attr, name in attrs.items():
            value = getattr(module, attr)
            if isinstance(value, str):
                static[name] = value
            elif value is not None:
                scalars[name] = Operand(value=float(value), host=f"self.{target}.{attr}")
        return unary(conv, fx_node, op, args[0], scalars, static)
    if isinstance(module, torch.nn.Dropout):
        return dropout(conv, args[0], float(module.p), module.training, what)
    return _norm_or_pool_module(conv, fx_node, module, target, args, what)


def _param(conv: Converter, tensor: Any, host: str, fallback: Operand, name: str) -> Operand:
    if tensor is None:
        return fallback
    node_id = conv.add(Node(id=name, op="param", kind="col", host=host, shape=list(tensor.shape)))
    return Operand(ref=node_id)


def _affine(conv: Converter, fx_node: torch.fx.Node, module: torch.nn.Module, target: str) -> list[Operand]:
    return [_param(conv, getattr(module, "weight", None), f"self.{target}.weight", ONE, f"{fx_node.name}_w"),
            _param(conv, getattr(module, "bias", None), f"self.{target}.bias", ZERO, f"{fx_node.name}_b")]


def _full(conv: Converter, value: Any, what: str) -> Node:
    x = conv.node_of(value, f"the input of {what}")
    if x.kind != "full":
        raise Unsupported(f"{what} applied to a {x.kind} value")
    return x


def _norm_or_pool_module(conv: Converter, fx_node: torch.fx.Node, module: torch.nn.Module, target: str,
                         args: list[Any], what: str) -> Any:
    eps = {"eps": Operand(value=float(getattr(module, "eps", 1e-5)), host=f"self.{target}.eps")}
    if isinstance(module, torch.nn.GroupNorm):
        x = _full(conv, args[0], what)
        scalars = eps | {"num_groups": Operand(value=float(module.num_groups), host=f"self.{target}.num_groups")}
        return _norm(conv, fx_node, "group_norm", x, _affine(conv, fx_node, module, target), scalars)
    if isinstance(module, torch.nn.LayerNorm):
        x = _full(conv, args[0], what)
        if len(module.normalized_shape) != 1:
            raise Unsupported(f"{what} normalises over {list(module.normalized_shape)}; only the last dim is supported")
        return _norm(conv, fx_node, "layer_norm", x, _affine(conv, fx_node, module, target), eps)
    if isinstance(module, torch.nn.BatchNorm1d):
        x = _full(conv, args[0], what)
        training = module.training or not module.track_running_stats
        extra = [] if training else [
            _param(conv, module.running_mean, f"self.{target}.running_mean", ZERO, f"{fx_node.name}_rm"),
            _param(conv, module.running_var, f"self.{target}.running_var", ONE, f"{fx_node.name}_rv")]
        attrs: dict[str, Any] = {"training": training}
        if module.training and module.track_running_stats:  # the batch also moves the running statistics
            if module.momentum is None:
                raise Unsupported(f"{what} averages its running statistics cumulatively (momentum=None)")
            attrs["running"] = f"self.{target}"
        return _norm(conv, fx_node, "batch_norm", x, _affine(conv, fx_node, module, target) + extra, eps, attrs)
    if isinstance(module, torch.nn.AvgPool1d | torch.nn.MaxPool1d):
        mode = "avg" if isinstance(module, torch.nn.AvgPool1d) else "max"
        return _pool(conv, fx_node, args[0], mode, module.kernel_size, module.stride, module.padding,
                     getattr(module, "dilation", 1), module.ceil_mode, what)
    raise Unsupported(f"{what} is not a module the fusion generator knows")


def _norm(conv: Converter, fx_node: torch.fx.Node, op: str, x: Node, affine: list[Operand],
          scalars: dict[str, Operand], attrs: dict[str, Any] | None = None) -> str:
    return conv.add(Node(id=fx_node.name, op=op, args=[Operand(ref=x.id), *affine], scalars=scalars,
                         attrs=attrs or {}, kind="full", cols=x.cols, shape=conv.shape(fx_node)))


def _one(value: Any) -> Any:
    return value[0] if isinstance(value, list | tuple) and len(value) == 1 else value


def _pool(conv: Converter, fx_node: torch.fx.Node, value: Any, mode: str, kernel: Any, stride: Any, padding: Any,
          dilation: Any, ceil_mode: bool, what: str) -> Unsqueezed:
    if not isinstance(value, Unsqueezed):
        raise Unsupported(f"{what} on a value that is not `x.unsqueeze(1)` of a GEMM output")
    kernel, stride = _one(kernel), _one(stride) if stride not in (None, [], ()) else _one(kernel)
    if not isinstance(kernel, int) or kernel < 1 or kernel & (kernel - 1) or stride != kernel:
        raise Unsupported(f"{what} with kernel {kernel} and stride {stride}; power-of-two windows that do not "
                          "overlap (stride = kernel) are supported")
    if _one(padding) not in (0, None) or _one(dilation) not in (1, None) or ceil_mode:
        raise Unsupported(f"{what} with padding, dilation or ceil_mode")
    x = conv.nodes[value.node]
    node = conv.add(Node(id=fx_node.name, op="pool", args=[Operand(ref=x.id)], attrs={"mode": mode, "kernel": kernel},
                         kind="full", cols=f"{x.cols}/{kernel}", shape=conv.shape(fx_node)))
    return Unsqueezed(node)


def functional_norm_or_pool(conv: Converter, fx_node: torch.fx.Node, name: str, args: list[Any],
                            kwargs: dict[str, Any]) -> Any:
    """F.group_norm / F.layer_norm / F.batch_norm / F.avg_pool1d / F.max_pool1d, else None."""
    what = f"function `{name}`"

    def get(index: int, key: str, default: Any = None) -> Any:
        return kwargs.get(key, args[index] if len(args) > index else default)

    def tensor(value: Any, fallback: Operand) -> Operand:
        return fallback if value is None else conv.operand(value, what)

    if name in ("avg_pool1d", "max_pool1d"):
        return _pool(conv, fx_node, args[0], name[:3], get(1, "kernel_size"), get(2, "stride"), get(3, "padding", 0),
                     1 if name == "avg_pool1d" else get(4, "dilation", 1), bool(get(4 if name == "avg_pool1d" else 5,
                                                                                  "ceil_mode", False)), what)
    if name not in ("group_norm", "layer_norm", "batch_norm"):
        return None
    x = _full(conv, args[0], what)
    if name == "group_norm":
        affine = [tensor(get(2, "weight"), ONE), tensor(get(3, "bias"), ZERO)]
        scalars = {"num_groups": conv.operand(get(1, "num_groups"), what), "eps": conv.operand(get(4, "eps", 1e-5), what)}
        return _norm(conv, fx_node, name, x, affine, scalars)
    if name == "layer_norm":
        shape = get(1, "normalized_shape")
        if len(shape) != 1:
            raise Unsupported(f"{what} over {list(shape)}; only the last dim is supported")
        affine = [tensor(get(2, "weight"), ONE), tensor(get(3, "bias"), ZERO)]
        return _norm(conv, fx_node, name, x, affine, {"eps": conv.operand(get(4, "eps", 1e-5), what)})
    training = bool(get(5, "training", False))
    if training and (get(1, "running_mean") is not None or get(2, "running_var") is not None):
        raise Unsupported(f"{what} in training mode with running statistics (the generator does not update them)")
    affine = [tensor(get(3, "weight"), ONE), tensor(get(4, "bias"), ZERO)]
    if not training:
        affine += [tensor(get(1, "running_mean"), ZERO), tensor(get(2, "running_var"), ONE)]
    return _norm(conv, fx_node, name, x, affine, {"eps": conv.operand(get(7, "eps", 1e-5), what)},
                 {"training": training})


HANDLERS.module = convert_module
HANDLERS.functional.append(functional_norm_or_pool)
