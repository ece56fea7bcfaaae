"""BatchNorm, GroupNorm, LayerNorm and InstanceNorm: statistics, then one normalising pass.

Statistics run per "row" of the contiguous input: a row is a batch-norm channel (every n and
spatial position of it), a group of a sample, a sample's normalised dims, or one (n, c) instance.
Element j of row a sits at a * row_stride + (j // inner) * outer_stride + j % inner, which covers
all four. Mean first, then the centred sum of squares (two passes, fp32: no cancellation), biased
as the normalisation uses it. The apply pass maps each element to its statistic and its affine
entry by (i // div) % mod. In training mode BatchNorm (and InstanceNorm with running stats) update
the running statistics as torch does (unbiased variance, momentum or a cumulative average).
"""

import torch
import triton
import triton.language as tl

from xe_forge.proposers.lower.general.runtime.common import xfg_acc, xfg_cast


@triton.jit
def xfg_moments_kernel(x_ptr, mean_ptr, var_ptr, R, row_stride, inner, outer_stride, BLOCK: tl.constexpr):
    a = tl.program_id(0).to(tl.int64)
    base = x_ptr + a * row_stride
    offs = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), tl.float32)
    for j0 in range(0, R, BLOCK):
        j = (j0 + offs).to(tl.int64)
        total += tl.load(base + (j // inner) * outer_stride + j % inner, mask=j < R, other=0.0).to(tl.float32)
    mean = tl.sum(total, 0) / R
    m2 = tl.zeros((BLOCK,), tl.float32)
    for j0 in range(0, R, BLOCK):
        j = (j0 + offs).to(tl.int64)
        x = tl.load(base + (j // inner) * outer_stride + j % inner, mask=j < R, other=0.0).to(tl.float32)
        dev = tl.where(j < R, x - mean, 0.0)
        m2 += dev * dev
    tl.store(mean_ptr + a, mean)
    tl.store(var_ptr + a, tl.sum(m2, 0) / R)


@triton.jit
def xfg_norm_apply_kernel(x_ptr, y_ptr, mean_ptr, var_ptr, w_ptr, b_ptr, numel, eps, stat_div, stat_mod, aff_div,
                          aff_mod, HAS_W: tl.constexpr, HAS_B: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    s = (offs // stat_div) % stat_mod
    c = (offs // aff_div) % aff_mod
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(ACC)
    mean = tl.load(mean_ptr + s, mask=mask, other=0.0).to(ACC)
    var = tl.load(var_ptr + s, mask=mask, other=1.0).to(ACC)
    y = (x - mean) / tl.sqrt(var + eps)
    if HAS_W:
        y = y * tl.load(w_ptr + c, mask=mask, other=1.0).to(ACC)
    if HAS_B:
        y = y + tl.load(b_ptr + c, mask=mask, other=0.0).to(ACC)
    tl.store(y_ptr + offs, xfg_cast(y, y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def xfg_running_kernel(mean_ptr, var_ptr, rm_ptr, rv_ptr, nbt_ptr, C, N, count, momentum, CUMULATIVE: tl.constexpr,
                       HAS_NBT: tl.constexpr, BLOCK: tl.constexpr):
    # one program: running = (1 - f) * running + f * batch value, f = momentum or 1 / num_batches_tracked;
    # N > 1 (instance norm): the batch value is the mean over the N instances of each channel
    factor = momentum
    if HAS_NBT:
        tracked = tl.load(nbt_ptr) + 1
        tl.store(nbt_ptr, tracked)
        if CUMULATIVE:
            factor = 1.0 / tracked.to(tl.float32)
    unbias = count / tl.maximum(count - 1.0, 1.0)
    offs = tl.arange(0, BLOCK)
    for c0 in range(0, C, BLOCK):
        c = c0 + offs
        mask = c < C
        mean = tl.zeros((BLOCK,), tl.float32)
        var = tl.zeros((BLOCK,), tl.float32)
        for n in range(0, N):
            mean += tl.load(mean_ptr + n * C + c, mask=mask, other=0.0)
            var += tl.load(var_ptr + n * C + c, mask=mask, other=0.0)
        rm = tl.load(rm_ptr + c, mask=mask, other=0.0).to(tl.float32)
        rv = tl.load(rv_ptr + c, mask=mask, other=0.0).to(tl.float32)
        rm = (1.0 - factor) * rm + factor * (mean / N)
        rv = (1.0 - factor) * rv + factor * (var / N) * unbias
        tl.store(rm_ptr + c, xfg_cast(rm, rm_ptr.dtype.element_ty), mask=mask)
        tl.store(rv_ptr + c, xfg_cast(rv, rv_ptr.dtype.element_ty), mask=mask)


def xfg_moments(x, rows, count, row_stride, inner, outer_stride):
    """fp32 (mean, biased variance) of `rows` rows of `count` elements of the contiguous x."""
    mean = torch.empty((rows,), device=x.device, dtype=torch.float32)
    var = torch.empty((rows,), device=x.device, dtype=torch.float32)
    if rows > 0:
        xfg_moments_kernel[(rows,)](x, mean, var, count, row_stride, inner, outer_stride, BLOCK=1024, num_warps=4)
    return mean, var


def xfg_norm_apply(x, mean, var, weight, bias, eps, stat_div, stat_mod, aff_div, aff_mod):
    y = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    numel = x.numel()
    if numel == 0:
        return y
    xfg_norm_apply_kernel[(triton.cdiv(numel, 1024),)](
        x, y, mean, var, weight if weight is not None else x, bias if bias is not None else x, numel, float(eps),
        stat_div, stat_mod, aff_div, aff_mod, HAS_W=weight is not None, HAS_B=bias is not None, ACC=xfg_acc(x.dtype),
        BLOCK=1024, num_warps=4)
    return y


def xfg_spatial(x):
    """Elements per (n, c) of an (N, C, ...) tensor."""
    size = 1
    for v in x.shape[2:]:
        size *= v
    return size


def xfg_batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps, track_running_stats=True,
                   num_batches_tracked=None):
    """nn.BatchNorm1d/2d/3d forward: batch statistics in training mode (running ones updated), else running."""
    x = x.contiguous()
    n, c, spatial = x.shape[0], x.shape[1], xfg_spatial(x)
    use_batch = training or running_mean is None or running_var is None
    if use_batch:
        mean, var = xfg_moments(x, c, n * spatial, spatial, spatial, c * spatial)
        if training and track_running_stats and running_mean is not None and running_var is not None:
            xfg_running_update(mean, var, running_mean, running_var, num_batches_tracked, c, 1, n * spatial,
                               momentum)
    else:
        mean, var = running_mean, running_var
    return xfg_norm_apply(x, mean, var, weight, bias, eps, spatial, c, spatial, c)


def xfg_running_update(mean, var, running_mean, running_var, num_batches_tracked, channels, instances, count,
                       momentum):
    xfg_running_kernel[(1,)](mean, var, running_mean, running_var,
                             num_batches_tracked if num_batches_tracked is not None else mean, channels, instances,
                             float(count), 0.0 if momentum is None else float(momentum), CUMULATIVE=momentum is None,
                             HAS_NBT=num_batches_tracked is not None, BLOCK=128, num_warps=4)


def xfg_group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    """F.group_norm: statistics per (sample, group of C / G channels)."""
    x = x.contiguous()
    n, c, spatial = x.shape[0], x.shape[1], xfg_spatial(x)
    per = (c // num_groups) * spatial
    mean, var = xfg_moments(x, n * num_groups, per, per, per, 0)
    return xfg_norm_apply(x, mean, var, weight, bias, eps, per, n * num_groups, spatial, c)


def xfg_layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """F.layer_norm over the last len(normalized_shape) dims."""
    x = x.contiguous()
    dims = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    per = 1
    for v in x.shape[x.dim() - len(dims):]:
        per *= v
    rows = x.numel() // per if per else 0
    mean, var = xfg_moments(x, rows, per, per, per, 0)
    return xfg_norm_apply(x, mean, var, weight, bias, eps, per, max(rows, 1), 1, per)


def xfg_instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                      momentum=0.1, eps=1e-5):
    """F.instance_norm: statistics per (sample, channel); running ones used or updated as torch does."""
    x = x.contiguous()
    n, c, spatial = x.shape[0], x.shape[1], xfg_spatial(x)
    if use_input_stats:
        mean, var = xfg_moments(x, n * c, spatial, spatial, spatial, 0)
        if running_mean is not None and running_var is not None:
            xfg_running_update(mean, var, running_mean, running_var, None, c, n, spatial,
                               0.0 if momentum is None else momentum)
        return xfg_norm_apply(x, mean, var, weight, bias, eps, spatial, n * c, spatial, c)
    return xfg_norm_apply(x, running_mean, running_var, weight, bias, eps, spatial, c, spatial, c)
