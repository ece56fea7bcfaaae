"""Trace the reference's forward with torch.fx into general-path steps (runs where the reference may run).

The model is built on the meta device (no weights allocated, whatever the sizes) and traced with
its numeric attributes (`self.scaling_factor = 2.0`, `self.dim = 1`) standing as graph values, so
the port reads them from the live model instead of baking the traced ones; where the reference
uses one in Python control flow, or builds a tensor from it, it is traced as a constant instead.
Shapes and dtypes come from propagating meta inputs of the problem's own shapes.
"""

from __future__ import annotations

from typing import Any

from xe_forge.proposers.lower.general.models import GeneralGraph


def numeric_attributes(model: Any) -> set[str]:
    """The model's own int/float attributes (never bools, never private ones)."""
    return {k for k, v in vars(model).items()
            if not k.startswith("_") and isinstance(v, int | float) and not isinstance(v, bool)}


def fx_trace(model: Any, proxied: set[str]) -> Any:
    """torch.fx's symbolic trace with `proxied` attributes of the root read as get_attr graph values."""
    import torch.fx

    tracer = torch.fx.Tracer()
    original = type(model)
    proxies: dict[str, Any] = {}

    class Traced(original):  # type: ignore[misc, valid-type]
        def __getattribute__(self, name: str) -> Any:
            if name in proxied:
                if name not in proxies:
                    proxies[name] = tracer.create_proxy("get_attr", name, (), {})
                return proxies[name]
            return original.__getattribute__(self, name)

    model.__class__ = Traced
    try:
        graph = tracer.trace(model)
    finally:
        model.__class__ = original
    return torch.fx.GraphModule(model, graph)


def trace_model(model: Any, inputs: list[Any]) -> GeneralGraph:
    """The steps of model(*inputs); inputs may be meta tensors. A refusal is a graph with a reason."""
    from torch.fx.passes.shape_prop import ShapeProp

    from xe_forge.proposers.lower.general import functions, modules  # noqa: F401 - they register the converters
    from xe_forge.proposers.lower.general.convert import Converter, Unsupported

    gm, first_error = None, None
    for proxied in (numeric_attributes(model), set()):
        try:
            gm = fx_trace(model, proxied)
            break
        except Exception as err:  # fx raises many types for data-dependent control flow
            first_error = first_error or err
    if gm is None:
        text = str(first_error).splitlines()[0][:200] if str(first_error) else ""
        return GeneralGraph(reason=f"torch.fx cannot trace the reference's forward: {type(first_error).__name__}: "
                                   f"{text}")
    try:
        ShapeProp(gm).propagate(*inputs)
    except Exception as err:
        return GeneralGraph(reason=f"shape propagation of the reference failed: {type(err).__name__}: "
                                   f"{str(err).splitlines()[0][:200] if str(err) else ''}")
    try:
        return Converter(gm, model).run()
    except Unsupported as err:
        return GeneralGraph(reason=err.reason)
