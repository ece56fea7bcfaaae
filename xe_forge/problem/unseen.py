"""Unseen shapes: sizes no proposer saw, chosen to cross tile boundaries in every free dimension.

A kernel whose grid, masks or strides are hard-coded for the visible shape passes there and only
fails where a dimension needs one more (or one fewer) tile. So each free dimension gets a larger
value beyond the next multiple of 128 (or of a power of two well above a small size), larger by a
non-multiple of 128, and a smaller one: mid-tile for every tile of 16 and up, and odd when the
visible size is not a multiple of 8 (a multiple of 8 stays one: 16-byte aligned rows are a fair
assumption for a kernel using TMA or vector loads, an odd size where the problem had one is not). One shape per free dim makes
that dim larger and every other free dim smaller, so every dim is checked both ways and no shape
costs much more than the visible one.

Dimensions named like hyperparameters (kernel size, stride, groups, pooling, eps, ...) are frozen:
the problem fixes them. Values the reference rejects (a channel count groups must divide) are
replaced by the next candidate it accepts; a dim with none is frozen, and the report says why.
Without a spec, the dims are the module's integer constants that feed get_inputs()/
get_init_inputs(), rewritten in the source (problem/constants.py) so derived constants
(`bias_shape = (out_channels, 1, 1)`) follow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

HYPER_TOKENS = {
    "kernel", "ksize", "stride", "strides", "padding", "pad", "dilation", "group", "groups", "pool", "pooling",
    "window", "eps", "epsilon", "slope", "momentum", "dropout", "p", "prob", "scale", "factor", "divisor",
    "divide", "value", "min", "max", "clamp", "alpha", "beta", "axis", "negative", "threshold", "output",
    "shape", "bias", "constant", "add", "multiply", "sub", "subtract", "temperature", "heads", "head",
}
AXIS_TOKENS = {"dim", "dims"}  # `dim = 1` is an axis, `hidden_dim = 4096` a size
MAX_PROBES = 8
MAX_SHAPES = 6


class UnseenShape(BaseModel):
    name: str  # which dim grows: "IN_FEAT larger, others smaller"
    dims: dict[str, int | float]


class UnseenPlan(BaseModel):
    shapes: list[UnseenShape] = Field(default_factory=list)
    frozen: dict[str, str] = Field(default_factory=dict)  # dim -> why it was not varied


def frozen_reason(name: str, value: Any) -> str | None:
    """Why a dim is not varied, or None when it is a free size."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "not an integer size"
    tokens = {t for t in name.lower().replace("-", "_").split("_") if t}
    hyper = sorted(tokens & HYPER_TOKENS)
    if hyper:
        return f"a hyperparameter ('{hyper[0]}' in its name)"
    if tokens & AXIS_TOKENS and value <= 4:
        return "an axis, not a size"
    if value < 1:
        return "not a positive size"
    return None


def _tile(v: int) -> int:
    """Tiles up to this size are crossed: 128 for sizes >= 32, else a power of two near 4x the size."""
    if v >= 32:
        return 128
    t = 16
    while t < 4 * v:
        t *= 2
    return t


def bigger_candidates(v: int) -> list[int]:
    """Larger sizes past the next tile boundary; a size the problem keeps a multiple of 8 stays one (16-byte
    aligned rows for TMA and vector loads) while landing mid-tile for every tile of 16 and up."""
    base = -(-(v + 1) // _tile(v)) * _tile(v)
    offsets = (8, 24, 16, 48, 40, 32, 96, 64) if v % 8 == 0 else (3, 5, 6, 8, 12, 16, 24, 32)
    return [base + o for o in offsets if (base + o - v) % 128][:MAX_PROBES]


def smaller_candidates(v: int) -> list[int]:
    half = v // 2 // 8 * 8
    aligned = [half + 8 if half % 16 == 0 else half, half, half - 8, v - 8, v // 4 // 8 * 8, v - 16]
    odd = [v // 2 | 1, v // 2, v // 2 - 1, (3 * v // 4) // 8 * 8, v // 4, v - 8, v - 16, v - 1]
    out: list[int] = []
    for c in (aligned + odd if v % 8 == 0 else odd):
        if 1 <= c < v and c not in out:
            out.append(c)
    return out[:MAX_PROBES]


def plan_unseen(dims: dict[str, Any], accepts: Callable[[dict[str, Any]], bool]) -> UnseenPlan:
    """Tile-crossing shapes over `dims`; `accepts(dims)` says whether the reference runs there.

    One shape per free dim: that dim larger, every other free dim smaller. Each dim is checked both
    ways, and the shapes stay no larger than the visible one in all but one dim (cheap to run).
    """
    plan = UnseenPlan()
    free: list[tuple[str, int | None, int | None]] = []
    for name, value in dims.items():
        reason = frozen_reason(name, value)
        if reason:
            plan.frozen[name] = reason
            continue
        big = next((c for c in bigger_candidates(value) if accepts({**dims, name: c})), None)
        small = next((c for c in smaller_candidates(value) if accepts({**dims, name: c})), None)
        if big is None and small is None:
            plan.frozen[name] = "the reference accepts no other value"
            continue
        free.append((name, big, small))
    leads = [(name, big) for name, big, _ in free if big is not None][:MAX_SHAPES]
    if not leads and free:  # nothing can grow: one shape with everything smaller
        leads = [("", None)]
    bigger, smaller = set(), set()
    for lead, big in leads:
        wanted = {lead: big} if lead else {}
        wanted |= {name: small for name, _, small in free if name != lead and small is not None}
        shape = _joint(dims, wanted, accepts)
        changed = {k for k in shape if shape[k] != dims[k]}
        if not changed or any(s.dims == shape for s in plan.shapes):
            continue
        bigger |= {k for k in changed if shape[k] > dims[k]}
        smaller |= {k for k in changed if shape[k] < dims[k]}
        label = f"{lead} larger, others smaller" if lead else "all smaller"
        plan.shapes.append(UnseenShape(name=label, dims=shape))
    for name, big, small in free:
        missing = [w for w, seen, option in (("larger", bigger, big), ("smaller", smaller, small))
                   if name not in seen]
        if len(missing) == 2:
            plan.frozen[name] = "the reference rejects every new value together with the other dims"
        elif missing:
            plan.frozen[name] = f"never {missing[0]}: the reference accepts no such value"
    return plan


def _joint(dims: dict[str, Any], wanted: dict[str, int], accepts: Callable[[dict[str, Any]], bool]) -> dict:
    """All wanted changes at once if the reference accepts them, else as many as it accepts, in order."""
    full = {**dims, **wanted}
    if accepts(full):
        return full
    shape = dict(dims)
    for name, value in wanted.items():
        if accepts({**shape, name: value}):
            shape[name] = value
    return shape


# ---------------------------------------------------------------- module constants (no spec)
