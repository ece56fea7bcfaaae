"""fx call_module nodes -> steps: torch.nn layers as launcher calls, activations as pointwise ops.

Every hyperparameter is passed as an expression over the module (`self.conv.stride`,
`self.gn.num_groups`, `self.bn.training`), read when forward runs: a model built with other
constructor arguments, or put in eval mode, is computed as that model. Only what changes the
structure of the computation is read at trace time (a pool returning indices, a padding mode).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx

from xe_forge.proposers.fusion.ops import MODULES as ACTIVATIONS
from xe_forge.proposers.lower.general import optable as t
from xe_forge.proposers.lower.general.convert import HANDLERS, Converter, Unsupported
from xe_forge.proposers.lower.general.models import Arg


def convert_module(conv: Converter, node: torch.fx.Node, module: torch.nn.Module, m: str) -> Any:
    kind = type(module).__name__
    what = f"nn.{kind} module `{m}`"
    if len(node.args) != 1 or node.kwargs:
        raise Unsupported(f"{what} called with {len(node.args)} positional and {len(node.kwargs)} keyword arguments")
    x = node.args[0]
    for attr, why in t.NEEDS_FALSE.items():
        value = getattr(module, attr, None)
        if value not in (None, False, "zeros"):
            raise Unsupported(f"{what} {why}")
    if kind in ("Identity",):
        return conv.arg(x)
    if kind in t.MODULE_CALLS:
        return _call(conv, node, module, m, kind, x)
    if kind in ACTIVATIONS and ACTIVATIONS[kind][0] not in ("softmax", "log_softmax", "alias"):
        op, attrs = ACTIVATIONS[kind]
        params: dict[str, Any] = {}
        static: dict[str, Any] = {}
        for attr, name in attrs.items():
            value = getattr(module, attr)
            if isinstance(value, str):
                static[name] = value
            elif value is not None:
                params[name] = Arg(kind="host", value=f"{m}.{attr}")
        return conv.new("pointwise", op, node, [conv.arg(x)], params=params, attrs=static,
                        inplace=bool(getattr(module, "inplace", False)))
    if kind == "Flatten":
        return conv.new("method", "flatten", node, [conv.arg(x), Arg(kind="host", value=f"{m}.start_dim"),
                                                    Arg(kind="host", value=f"{m}.end_dim")])
    if kind == "Unflatten":
        return conv.new("method", "unflatten", node, [conv.arg(x), Arg(kind="host", value=f"{m}.dim"),
                                                      Arg(kind="host", value=f"{m}.unflattened_size")])
    raise Unsupported(f"{what} is not a layer the general path knows")


def _call(conv: Converter, node: torch.fx.Node, module: torch.nn.Module, m: str, kind: str, x: Any) -> Any:
    launcher, entries = t.MODULE_CALLS[kind]
    args = [conv.arg(x)]
    for entry in entries:
        got = conv.module_arg(module, m, entry)
        if got is None:
            break
        args.append(got)
    if kind in ("Softmax", "LogSoftmax"):
        if module.dim is None:  # torch's legacy implicit dim, fixed by the rank
            rank = len(conv.step(conv.arg(x).value).shape)
            args[1] = Arg(kind="lit", value=0 if rank in (0, 1, 3) else 1)
        if kind == "Softmax":
            args.append(Arg(kind="lit", value=False))
    return conv.new("call", launcher, node, args)


HANDLERS.register(convert_module=convert_module)
