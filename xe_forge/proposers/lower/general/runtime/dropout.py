"""Dropout in training mode: a Philox mask drawn in the kernel, a new seed for every call.

The seed is a per-module call counter (no torch call, no host round trip): every call draws a fresh
mask, as torch's dropout does; no mask can reproduce torch's own draws, so a problem whose reference
drops out in training is judged by the verifier's rules for random references, not by this path.
Outside training, or with p = 0, dropout is the identity.
"""

import torch
import triton
import triton.language as tl

from xe_forge.proposers.lower.general.runtime.common import xfg_cast

XFG_DROPOUT_CALLS = {"count": 0}


@triton.jit
def xfg_dropout_kernel(x_ptr, y_ptr, seed, numel, p, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    keep = tl.rand(seed, offs.to(tl.uint32)) >= p
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, xfg_cast(tl.where(keep, x * scale, 0.0), y_ptr.dtype.element_ty), mask=mask)


def xfg_dropout(x, p=0.5, training=True):
    """F.dropout: zero each element with probability p, scale the rest by 1 / (1 - p)."""
    if not training or p == 0:
        return x
    if p >= 1:
        return torch.zeros_like(x)
    x = x.contiguous()
    y = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    XFG_DROPOUT_CALLS["count"] += 1
    seed = (XFG_DROPOUT_CALLS["count"] * 1000003) % 2147483647
    numel = x.numel()
    if numel > 0:
        xfg_dropout_kernel[(triton.cdiv(numel, 1024),)](x, y, seed, numel, float(p), 1.0 / (1.0 - p), BLOCK=1024,
                                                        num_warps=4)
    return y
