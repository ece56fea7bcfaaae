"""Outputs a caller still holds: a later call may neither hand back their storage nor change them.

A user writes `y1 = m(x1); y2 = m(x2)` and keeps both. A kernel that returns one buffer per shape
(or rotates a few) overwrites `y1` with call 2's result, and each call's output is still right at
the moment the harness saves it (red team 2, root cause 9). So the candidate's process holds every
checked call's outputs for the whole request, as a caller would: an output whose storage is that of
an earlier call's output (the harness still holds it, so the allocator cannot have recycled it) is
refused, and after every call each earlier output must still have the exact sums it had when its
call returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _storage(t: Any) -> tuple[str, int] | None:
    try:
        return str(t.device), t.untyped_storage().data_ptr()
    except (RuntimeError, TypeError, NotImplementedError):  # no storage (a meta or sparse tensor)
        return None


def _sums(t: Any) -> tuple[float, float, int]:
    """Exact for a tensor that did not change (same data, same reduction): the values' sum, |sum|, NaNs."""
    import torch

    with torch.no_grad():
        x = t.detach()
        if x.is_complex():
            x = torch.view_as_real(x)
        x = x.double() if x.dtype != torch.bool else x.to(torch.float64)
        finite = torch.nan_to_num(x, nan=0.0, posinf=1e300, neginf=-1e300)
        return float(finite.sum()), float(finite.abs().sum()), int(torch.isnan(x).sum())


@dataclass
class HeldOutputs:
    """The outputs of one request's checked calls, with their sums when each call returned."""

    calls: list[tuple[str, list[Any], list[tuple[float, float, int]]]] = field(default_factory=list)

    def check(self, call_id: str, outputs: list[Any]) -> list[str]:
        """Why `outputs` (call `call_id`'s, just returned) break earlier calls' outputs; then hold them."""
        import torch

        tensors = [o for o in outputs if torch.is_tensor(o)]
        problems = []
        mine = {s for s in map(_storage, tensors) if s is not None}
        for earlier, held, sums in self.calls:
            if any(_storage(h) in mine for h in held):
                problems.append(f"the output of call {call_id} shares its storage with the output of earlier call "
                                f"{earlier}, which the caller still holds (one buffer reused across calls)")
            elif any(_sums(h) != s for h, s in zip(held, sums, strict=True)):
                problems.append(f"call {call_id} changed the output earlier call {earlier} returned, which the caller "
                                "still holds")
        self.calls.append((call_id, tensors, [_sums(t) for t in tensors]))
        return problems
