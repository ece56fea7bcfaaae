"""Reductions over any set of dims, and softmax / log-softmax over one dim.

The input is seen as (A, R, B): A the kept dims before the reduced ones, R the reduced dims, B the
kept dims after them (a contiguous tensor whose reduced dims are adjacent is that view as it is;
other layouts are made so by a permute and one copy). Each program reduces BLOCK_B columns of one
a over all of R in chunks, in fp32 (fp64 for fp64 data): sums, extremes that propagate NaN as
torch does, an online logsumexp, and the variance in two passes (mean first) so nothing cancels.
"""

import torch
import triton
import triton.language as tl

from xe_forge.proposers.lower.general.runtime.common import xfg_acc, xfg_block, xfg_cast

XFG_REDUCE_OPS = {"sum": 0, "mean": 1, "amax": 2, "amin": 3, "logsumexp": 4, "var": 5, "std": 6, "prod": 7}


@triton.jit
def xfg_reduce_kernel(x_ptr, out_ptr, R, B, divisor, OP: tl.constexpr, ACC: tl.constexpr,
                      BLOCK_R: tl.constexpr, BLOCK_B: tl.constexpr):
    blocks = tl.cdiv(B, BLOCK_B)  # one flat grid: (a, column block), whatever the sizes (no 65535 limit)
    a = (tl.program_id(0) // blocks).to(tl.int64)
    offs_b = (tl.program_id(0) % blocks) * BLOCK_B + tl.arange(0, BLOCK_B)
    mask_b = offs_b < B
    base = x_ptr + a * R * B + offs_b[None, :]
    rr = tl.arange(0, BLOCK_R)
    if OP == 2 or OP == 3:
        init = float("-inf") if OP == 2 else float("inf")
        best = tl.full((BLOCK_B,), init, ACC)
        nan = tl.zeros((BLOCK_B,), tl.int32)
        for r0 in range(0, R, BLOCK_R):
            r = r0 + rr
            m = (r[:, None] < R) & mask_b[None, :]
            x = tl.load(base + r[:, None].to(tl.int64) * B, mask=m, other=init).to(ACC)
            nan = tl.maximum(nan, tl.max((x != x).to(tl.int32), 0))
            if OP == 2:
                best = tl.maximum(best, tl.max(x, 0))
            else:
                best = tl.minimum(best, tl.min(x, 0))
        result = tl.where(nan > 0, float("nan"), best)
    elif OP == 4:
        top = tl.full((BLOCK_B,), float("-inf"), ACC)
        total = tl.zeros((BLOCK_B,), ACC)
        for r0 in range(0, R, BLOCK_R):
            r = r0 + rr
            m = (r[:, None] < R) & mask_b[None, :]
            x = tl.load(base + r[:, None].to(tl.int64) * B, mask=m, other=float("-inf")).to(ACC)
            new_top = tl.maximum(top, tl.max(x, 0))
            shift = tl.where(new_top == float("-inf"), 0.0, new_top)
            total = total * tl.exp(top - shift) + tl.sum(tl.exp(x - shift[None, :]), 0)
            top = new_top
        result = tl.where(top == float("-inf"), top, tl.log(total) + top)
    elif OP == 7:
        result = tl.full((BLOCK_B,), 1.0, ACC)
        for r0 in range(0, R, BLOCK_R):
            r = r0 + rr
            m = (r[:, None] < R) & mask_b[None, :]
            x = tl.load(base + r[:, None].to(tl.int64) * B, mask=m, other=1.0).to(ACC)
            result = result * tl.reduce(x, 0, xfg_multiply)
    else:
        total = tl.zeros((BLOCK_B,), ACC)
        for r0 in range(0, R, BLOCK_R):
            r = r0 + rr
            m = (r[:, None] < R) & mask_b[None, :]
            total += tl.sum(tl.load(base + r[:, None].to(tl.int64) * B, mask=m, other=0.0).to(ACC), 0)
        result = total
        if OP == 1:
            result = total / R
        if OP == 5 or OP == 6:
            mean = total / R
            m2 = tl.zeros((BLOCK_B,), ACC)
            for r0 in range(0, R, BLOCK_R):
                r = r0 + rr
                m = (r[:, None] < R) & mask_b[None, :]
                x = tl.load(base + r[:, None].to(tl.int64) * B, mask=m, other=0.0).to(ACC)
                dev = tl.where(m, x - mean[None, :], 0.0)
                m2 += tl.sum(dev * dev, 0)
            result = m2 / divisor
            if OP == 6:
                result = tl.sqrt(result)
    tl.store(out_ptr + a * B + offs_b, xfg_cast(result, out_ptr.dtype.element_ty), mask=mask_b)


@triton.jit
def xfg_multiply(a, b):
    return a * b


def xfg_dims(dim, rank):
    """A dim argument (None, an int, a sequence) as sorted non-negative dims; None and () mean all."""
    if dim is None:
        return list(range(rank))
    dims = [int(d) for d in dim] if isinstance(dim, (tuple, list)) else [int(dim)]
    if not dims:
        return list(range(rank))
    return sorted({d % rank if rank else 0 for d in dims})


def xfg_grouped(x, dims):
    """x as a contiguous (A, R, B) tensor with the reduced dims in the middle, and (A, R, B)."""
    rank = x.dim()
    if dims != list(range(dims[0], dims[0] + len(dims))):  # not adjacent: move them to the end
        kept = [d for d in range(rank) if d not in dims]
        x = x.permute(*kept, *dims)
        dims = list(range(len(kept), rank))
    x = x.contiguous()
    a, r, b = 1, 1, 1
    for i in range(rank):
        if i < dims[0]:
            a *= x.shape[i]
        elif i in dims:
            r *= x.shape[i]
        else:
            b *= x.shape[i]
    return x, a, r, b


def xfg_reduce(x, dim=None, keepdim=False, op="sum", correction=1, dtype=None):
    """sum / mean / amax / amin / logsumexp / var / std / prod over `dim` (torch's arguments)."""
    rank = x.dim()
    dims = xfg_dims(dim, rank)
    shape = [1 if i in dims else x.shape[i] for i in range(rank)] if keepdim else \
        [x.shape[i] for i in range(rank) if i not in dims]
    out_dtype = dtype if dtype is not None else x.dtype
    if rank == 0:
        x, dims = x.reshape(1), [0]
    grouped, a, r, b = xfg_grouped(x, dims)
    out = torch.empty((a, b), device=x.device, dtype=out_dtype)
    if out.numel() == 0:
        return out.reshape(shape)
    block_b = xfg_block(b, 1, 32)
    block_r = xfg_block(r, 16, max(16, 4096 // block_b))
    grid = (a * triton.cdiv(b, block_b),)
    xfg_reduce_kernel[grid](grouped, out, r, b, float(max(r - correction, 0)), OP=XFG_REDUCE_OPS[op],
                            ACC=xfg_acc(out_dtype), BLOCK_R=block_r, BLOCK_B=block_b, num_warps=4)
    return out.reshape(shape)


@triton.jit
def xfg_softmax_kernel(x_ptr, y_ptr, R, B, LOG: tl.constexpr, ACC: tl.constexpr, BLOCK_R: tl.constexpr,
                       BLOCK_B: tl.constexpr):
    blocks = tl.cdiv(B, BLOCK_B)  # one flat grid: (a, column block), whatever the sizes (no 65535 limit)
    a = (tl.program_id(0) // blocks).to(tl.int64)
    offs_b = (tl.program_id(0) % blocks) * BLOCK_B + tl.arange(0, BLOCK_B)
    mask_b = offs_b < B
    offset = a * R * B + offs_b[None, :]
    rr = tl.arange(0, BLOCK_R)
    top = tl.full((BLOCK_B,), float("-inf"), ACC)
    total = tl.zeros((BLOCK_B,), ACC)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + rr
        m = (r[:, None] < R) & mask_b[None, :]
        x = tl.load(x_ptr + offset + r[:, None].to(tl.int64) * B, mask=m, other=float("-inf")).to(ACC)
        new_top = tl.maximum(top, tl.max(x, 0))
        shift = tl.where(new_top == float("-inf"), 0.0, new_top)
        total = total * tl.exp(top - shift) + tl.sum(tl.exp(x - shift[None, :]), 0)
        top = new_top
    for r0 in range(0, R, BLOCK_R):
        r = r0 + rr
        m = (r[:, None] < R) & mask_b[None, :]
        x = tl.load(x_ptr + offset + r[:, None].to(tl.int64) * B, mask=m, other=0.0).to(ACC)
        if LOG:
            y = x - top[None, :] - tl.log(total)[None, :]
        else:
            y = tl.exp(x - top[None, :]) / total[None, :]
        tl.store(y_ptr + offset + r[:, None].to(tl.int64) * B, xfg_cast(y, y_ptr.dtype.element_ty), mask=m)


def xfg_softmax(x, dim, log=False, dtype=None):
    """softmax / log_softmax over one dim; the result is contiguous, in `dtype` or x's dtype."""
    y = torch.empty(x.shape, device=x.device, dtype=dtype if dtype is not None else x.dtype)
    if x.dim() == 0:
        x = x.reshape(1)
    grouped, a, r, b = xfg_grouped(x, [int(dim) % x.dim()])
    if y.numel() == 0:
        return y
    block_b = xfg_block(b, 1, 32)
    block_r = xfg_block(r, 16, max(16, 4096 // block_b))
    xfg_softmax_kernel[(a * triton.cdiv(b, block_b),)](grouped, y, r, b, LOG=log, ACC=xfg_acc(y.dtype),
                                                    BLOCK_R=block_r, BLOCK_B=block_b, num_warps=4)
    return y
