"""Which dtype casts compute: a cast that loses information does work, one that keeps it only moves data.

`x.to(torch.int32).to(torch.float32)` is torch computing trunc (and saturating), with no FLOP in
sight if every cast is "movement" (red team 2, root cause 5). So a cast from a floating dtype to an
integer or bool, from a wider float to a narrower one (or between the two 16-bit formats), and from
an integer to bool (`!= 0`) is compute, unless its target is one of the dtypes the call runs in (the
model's floating state and inputs, i.e. the reference's own dtypes): the final cast of an fp32
accumulator to a bf16 output, or an input cast the spec's dtype requires, round to the contract's
precision, which the comparison judges anyway. Widening casts and integer to float stay movement;
integer narrowing (int64 indices handed to a kernel as int32) is movement where it is exact on the
data, and compute where it changes a value: an int64 -> uint8 cast of values past 255 is `x & 255`
(red team 5, a24).
"""

from __future__ import annotations

from typing import Any

CAST_OPS = {"_to_copy": (0, None), "copy_": (1, 0), "_copy_from": (0, 1), "_copy_from_and_resize": (0, 1)}
"""aten op -> (position of the source, position of the destination; None: the op's result)."""


def run_dtypes(model: Any, inputs: Any) -> frozenset[Any]:
    """The floating dtypes a call runs in: the model's parameters and buffers and the floating inputs."""
    import torch

    from xe_forge.verify.model_walk import named_state

    found = set()
    try:
        state = named_state(model).values() if isinstance(model, torch.nn.Module) else []
    except Exception:  # a model the walk refuses is refused elsewhere
        state = []
    for t in [*state, *(inputs or [])]:
        if torch.is_tensor(t) and t.is_floating_point():
            found.add(t.dtype)
    return frozenset(found or {torch.get_default_dtype()})


def _loses(src: Any, dst: Any) -> bool:
    import torch

    if src == dst or dst.is_complex:
        return False
    if src.is_complex:
        return True
    if dst == torch.bool:
        return src != torch.bool
    if src.is_floating_point:
        if not dst.is_floating_point:
            return True
        wide, narrow = torch.finfo(src), torch.finfo(dst)
        return narrow.bits < wide.bits or narrow.eps > wide.eps or narrow.max < wide.max
    return False


def lossy_cast(name: str, args: tuple, out: Any, keep: frozenset[Any]) -> str | None:
    """'float32->int32' where this op is a cast that loses information to a dtype outside `keep`, else None."""
    import torch

    where = CAST_OPS.get(name)
    if where is None:
        return None
    src_at, dst_at = where
    src = args[src_at] if len(args) > src_at else None
    dst = out if dst_at is None else (args[dst_at] if len(args) > dst_at else None)
    if not (torch.is_tensor(src) and torch.is_tensor(dst)) or dst.dtype in keep:
        return None
    if not _loses(src.dtype, dst.dtype) and not _narrowing_changes(src, dst):
        return None
    return f"{str(src.dtype).removeprefix('torch.')}->{str(dst.dtype).removeprefix('torch.')}"


def _narrowing_changes(src: Any, dst: Any) -> bool:
    """An integer cast to a narrower or differently signed integer dtype that changed some value."""
    import torch

    a, b = src.dtype, dst.dtype
    if a.is_floating_point or b.is_floating_point or a.is_complex or b.is_complex or torch.bool in (a, b) or a == b:
        return False
    wide, narrow = torch.iinfo(a), torch.iinfo(b)
    if narrow.min <= wide.min and narrow.max >= wide.max:
        return False  # every value fits: widening
    try:
        return not torch.equal(dst.to(a), src.expand_as(dst) if src.shape != dst.shape else src)
    except RuntimeError:
        return True  # not comparable element by element: not shown exact
