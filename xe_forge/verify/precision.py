"""The 16-bit contract: a bf16/fp16 candidate may be as far from the fp32 truth as PyTorch itself is in that dtype.

Both are measured against the same truth: the reference in fp32 on exactly the rounded inputs and
weights the candidate got. PyTorch's own error is the reference module run eagerly in the run dtype
on those same values, in the reference process. An element passes where it is within today's
tolerance (atol + rtol |truth|), or where its error is at most FACTOR times PyTorch's error around
it plus one rounding of the output in that dtype:

    |got - truth| <= FACTOR * max(|eager - truth| over the WINDOW elements around it) + ulp(truth)

"Around it" (a window of the flattened output) is what keeps the rule fair: an error PyTorch
amplifies (a GEMM output rounded to bf16, then normalised by a small group variance) is amplified
for every element of that group, while whether PyTorch's own rounding happened to land near the
truth at one particular element is luck. The relative L2 bound follows the same rule. What it still
rejects is work less accurate than PyTorch's in the same dtype: fp8 operands, an fp16 accumulator,
dropped terms, a skipped normalisation term: each makes errors many times PyTorch's over most of the
output, not at a few elements.

In fp32 the same rule runs one level up, where today's tolerance fails (`relaxed_exact`): the truth
is the reference in float64 on the same values, PyTorch's own error is the fp32 reference's, and the
rounding is fp32's. Rounding noise that the problem amplifies (a batch norm over 7 rows, a group of
one channel, a ReLU output whose few non-zero values sit beside cancellation) is the fp32
reference's too, so an honest fp32 kernel passes there; a kernel that drops a term still errs many
times more than fp32 does over most of the output.
"""

from __future__ import annotations

from typing import Any

FACTOR = 4.0
WINDOW = 17  # elements of the flattened output around each one (odd: centred)
SIXTEEN_BIT = ("torch.bfloat16", "torch.float16", "bfloat16", "float16")


def applies(dtype: Any) -> bool:
    return str(dtype) in SIXTEEN_BIT


def ulp(values: Any, dtype: Any) -> Any:
    """One unit in the last place of `values` in a 16-bit dtype (the spacing at their magnitude)."""
    import torch

    info = torch.finfo(dtype)
    mags = values.abs().clamp_min(info.tiny)
    return torch.exp2(torch.floor(torch.log2(mags))) * info.eps


def eager_bound(want: Any, eager: Any, dtype: Any) -> Any | None:
    """Per element: FACTOR times PyTorch's error in the window around it, plus one ulp; None if unusable."""
    import torch
    import torch.nn.functional as F

    if eager is None or not torch.is_tensor(eager) or tuple(eager.shape) != tuple(want.shape):
        return None
    w = want.detach().double()  # where the comparison runs (the reference process's device)
    e = (eager.detach().to(w.device).double() - w).abs()
    e = torch.where(torch.isfinite(e), e, torch.zeros_like(e))
    flat = e.reshape(1, 1, -1)
    if flat.shape[-1] == 0:
        return torch.zeros_like(w)
    local = F.max_pool1d(flat, WINDOW, stride=1, padding=WINDOW // 2).reshape(w.shape)
    return FACTOR * local + ulp(w, dtype)


def relaxed(bad: Any, g: Any, w: Any, eager: Any, dtype: Any) -> Any:
    """`bad` (out of today's tolerance) minus the elements within PyTorch's own error in `dtype`."""
    import torch

    if not applies(dtype):
        return bad
    bound = eager_bound(w, eager, dtype)
    if bound is None:
        return bad
    within = (g - w).abs() <= bound
    return bad & ~(within & torch.isfinite(g))


def l2_limit(limit: float, w: Any, eager: Any, dtype: Any) -> float:
    """The relative L2 bound: today's, or FACTOR times PyTorch's own in that dtype if that is larger."""
    import torch

    if not applies(dtype) or eager is None or not torch.is_tensor(eager) or tuple(eager.shape) != tuple(w.shape):
        return limit
    e = eager.detach().to(w.device).double()
    norm = float(w.norm())
    if norm == 0.0 or not bool(torch.isfinite(e).all()):
        return limit
    return max(limit, FACTOR * float((e - w).norm()) / norm)


def relaxed_exact(bad: Any, g: Any, exact: Any, want: Any) -> Any:
    """`bad` minus the elements within FACTOR times the fp32 reference's own error against float64 (`exact`)."""
    import torch

    bound = eager_bound(exact, want, torch.float32)
    if bound is None:
        return bad
    e = exact.detach().to(bound.device).double()
    within = (g.to(bound.device) - e).abs() <= bound
    return bad & ~(within & torch.isfinite(g).to(bound.device))


def l2_within_exact(limit: float, g: Any, exact: Any, want: Any) -> bool:
    """The relative L2 error against float64 within the bound, or FACTOR times the fp32 reference's own."""
    import torch

    e = exact.detach().double()
    norm = float(e.norm())
    if norm == 0.0 or not bool(torch.isfinite(g).all()):
        return False
    own = float((want.detach().to(e.device).double() - e).norm()) / norm
    return float((g.to(e.device) - e).norm()) / norm <= max(limit, FACTOR * own)
