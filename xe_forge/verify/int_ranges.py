"""The index range a reference accepts, so integer inputs are drawn over all of it.

A spec declares an integer input's shape and dtype, not its range. Drawn from a small fixed range
([0, 16)), an embedding lookup that reads only the first rows of its table (`idx & 15`) passes. So
the reference process probes the range: the largest of the shape's dims for which the reference runs
and stays finite with every element at that bound minus one (a table's rows, a class count); trials
then draw over [0, that bound).
"""

from __future__ import annotations

from typing import Any

from xe_forge.problem.cases import INT_HIGH, build_case
from xe_forge.problem.spec import Spec, input_shapes
from xe_forge.verify.compare import flatten


def int_highs(spec: Spec | None, case: Any, ref: Any, device: str, dtype: str) -> dict[str, int]:
    """Per integer input of the spec: the probed bound (inputs without one keep [0, INT_HIGH))."""
    import torch

    if spec is None or case.variant is None:
        return {}
    names = list(input_shapes(spec, case.variant))
    ints = [n for n in names if (spec.inputs[n].dtype or "float").startswith(("int", "uint"))]
    highs: dict[str, int] = {}
    if not ints:
        return highs
    base = build_case(case.module, spec, case.variant, seed=0, device=device, dtype=dtype).inputs
    candidates = sorted({int(v) for v in case.variant.dims.values() if isinstance(v, int) and v > INT_HIGH},
                        reverse=True)
    for name in ints:
        i = names.index(name)
        for high in candidates:
            trial = list(base)
            trial[i] = torch.full_like(base[i], high - 1)
            try:
                with torch.no_grad():
                    out = flatten(ref(*trial))
            except Exception:  # outside the reference's range
                continue
            if all(bool(torch.isfinite(o).all()) for o in out if torch.is_tensor(o) and o.is_floating_point()):
                highs[name] = high
                break
    return highs
