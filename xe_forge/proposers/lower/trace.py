"""TorchDynamo tracing as the lowering does it: dynamic shapes, no duck sizing, one graph.

The same settings serve the GPU lowering (inductor.py wraps Inductor's compile_fx in the recording
backend) and the CPU, where tracing alone tells which model value each graph input is (the packager
needs that; Dynamo traces on any device).

Duck sizing is off: with it, Dynamo gives equal sizes one symbol (in_features == out_features ==
8192 became one `s59`), and a kernel packaged from that graph silently assumes they stay equal.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from xe_forge.proposers.lower.models import Placeholder


@contextlib.contextmanager
def dynamo_settings(*, duck_shape: bool = False) -> Iterator[None]:
    """Parameters and module attributes dynamic too; warnings.warn does not break the graph."""
    import torch._dynamo.config as dcfg
    import torch.fx.experimental._config as fxcfg

    patches = [(dcfg, "force_parameter_static_shapes", False),
               (dcfg, "force_nn_module_property_static_shapes", False),
               (fxcfg, "use_duck_shape", duck_shape)]
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patches]
    logging_fns = getattr(dcfg, "reorderable_logging_functions", None)
    added = logging_fns is not None and warnings.warn not in logging_fns
    try:
        for mod, name, value in patches:
            setattr(mod, name, value)
        if added:
            logging_fns.add(warnings.warn)
        yield
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)
        if added:
            logging_fns.discard(warnings.warn)


def placeholders_of(gm: Any) -> list[Placeholder]:
    """Each graph input of a Dynamo graph, with its source and whether it is a size or a Python scalar."""
    import torch

    out = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        arg = node.meta.get("grapharg")
        source = arg.source.name if arg is not None else node.target
        source = source() if callable(source) else source
        example = node.meta.get("example_value")
        if isinstance(example, torch.SymInt | int):
            kind = "symint"
        elif arg is not None and getattr(arg, "pass_arg_as_tensor", False):
            kind = "scalar"
        else:
            kind = "tensor"
        out.append(Placeholder(source=str(source), kind=kind))
    return out


def recording_backend(record: dict[str, Any], compile_fn: Callable[[Any, list[Any]], Any] | None = None):
    """A torch.compile backend that records the graph's inputs, then compiles (or runs it as is)."""

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        record.setdefault("graphs", 0)
        record["graphs"] += 1
        record["placeholders"] = placeholders_of(gm)
        outputs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        record["outputs"] = len(outputs) if isinstance(outputs, tuple | list) else 1
        return compile_fn(gm, example_inputs) if compile_fn is not None else gm.forward

    return backend


def trace_placeholders(model: Any, inputs: list[Any], *, duck_shape: bool = False) -> dict[str, Any]:
    """Trace forward once (no compilation): graph inputs, output count and graph count."""
    import torch

    record: dict[str, Any] = {}
    torch._dynamo.reset()
    with dynamo_settings(duck_shape=duck_shape), torch.no_grad():
        compiled = torch.compile(model, backend=recording_backend(record), dynamic=True, fullgraph=True)
        result = compiled(*inputs)
    torch._dynamo.reset()
    record["returns_tuple"] = isinstance(result, tuple | list)
    return record
