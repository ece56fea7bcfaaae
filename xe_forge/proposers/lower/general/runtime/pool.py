"""Max and average pooling, fixed-window and adaptive, 1D to 3D, every window size at run time.

One program computes BLOCK output positions of the (N, C, OD, OH, OW) output (1D and 2D pools are
3D ones with size-1 leading dims) and loops over its window. Windows follow torch exactly:
padding, dilation (max), ceil_mode (a last window must start inside the input or its left
padding), count_include_pad and divisor_override (average), NaN propagating through a max; the
adaptive window of output o over an input of size I is [floor(o I / O), ceil((o + 1) I / O)).
"""

import torch
import triton
import triton.language as tl

from xe_forge.proposers.lower.general.runtime.common import xfg_acc, xfg_cast, xfg_ntuple, xfg_pad_front


@triton.jit
def xfg_pool_kernel(x_ptr, y_ptr, total, C, D, H, W, OD, OH, OW, sxn, sxc, sxd, sxh, sxw,
                    KD, KH, KW, sd, sh, sw, pd, ph, pw, dd, dh, dw, divisor,
                    MAX: tl.constexpr, ADAPTIVE: tl.constexpr, COUNT_PAD: tl.constexpr, DIVISOR: tl.constexpr,
                    ACC: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    rest = offs // OW
    oh = rest % OH
    rest = rest // OH
    od = rest % OD
    rest = rest // OD
    base = x_ptr + (rest // C) * sxn + (rest % C) * sxc
    if ADAPTIVE:
        d0 = (od * D) // OD
        h0 = (oh * H) // OH
        w0 = (ow * W) // OW
        d1 = ((od + 1) * D + OD - 1) // OD
        h1 = ((oh + 1) * H + OH - 1) // OH
        w1 = ((ow + 1) * W + OW - 1) // OW
    else:
        d0 = od * sd - pd
        h0 = oh * sh - ph
        w0 = ow * sw - pw
        d1 = tl.minimum(d0 + (KD - 1) * dd + 1, D + pd)
        h1 = tl.minimum(h0 + (KH - 1) * dh + 1, H + ph)
        w1 = tl.minimum(w0 + (KW - 1) * dw + 1, W + pw)
    if MAX:
        acc = tl.full((BLOCK,), float("-inf"), ACC)
    else:
        acc = tl.zeros((BLOCK,), ACC)
    count = tl.zeros((BLOCK,), ACC)
    for kd in range(0, KD):
        i_d = d0 + kd * dd
        for kh in range(0, KH):
            i_h = h0 + kh * dh
            for kw in range(0, KW):
                i_w = w0 + kw * dw
                inside = (i_d >= 0) & (i_d < D) & (i_h >= 0) & (i_h < H) & (i_w >= 0) & (i_w < W)
                if ADAPTIVE:
                    inside = inside & (i_d < d1) & (i_h < h1) & (i_w < w1)
                valid = mask & inside
                v = tl.load(base + i_d * sxd + i_h * sxh + i_w * sxw, mask=valid, other=0.0).to(ACC)
                if MAX:
                    acc = tl.where(valid & ((v > acc) | (v != v)), v, acc)
                else:
                    acc += tl.where(valid, v, 0.0)
                    count += tl.where(valid, 1.0, 0.0)
    if MAX:
        result = acc
    elif DIVISOR:
        result = acc / divisor
    elif COUNT_PAD:  # the window clipped to the padded input, padding counted
        result = acc / ((d1 - d0) * (h1 - h0) * (w1 - w0)).to(ACC)
    else:
        result = acc / tl.maximum(count, 1.0)
    tl.store(y_ptr + offs, xfg_cast(result, y_ptr.dtype.element_ty), mask=mask)


def xfg_pool_size(size, k, s, p, d, ceil_mode):
    """torch's pooling output size (pooling_output_shape in ATen)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def xfg_pool_launch(x, nd, out_sizes, k, s, p, d, divisor, is_max, adaptive, count_pad):
    """Run the pooling kernel on x (N, C, *nd) or unbatched (C, *nd); lists are nd long."""
    batched = x.dim() == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    y = torch.empty((x.shape[0], x.shape[1], *out_sizes), device=x.device, dtype=x.dtype)
    x5, y5 = x, y
    for _ in range(3 - nd):
        x5, y5 = x5.unsqueeze(2), y5.unsqueeze(2)
    total = y.numel()
    if total > 0:
        xfg_pool_kernel[(triton.cdiv(total, 256),)](
            x5, y5, total, x5.shape[1], *x5.shape[2:], *y5.shape[2:], *x5.stride(), *xfg_pad_front(k, 3, 1),
            *xfg_pad_front(s, 3, 1), *xfg_pad_front(p, 3, 0), *xfg_pad_front(d, 3, 1),
            float(divisor) if divisor else 1.0, MAX=is_max, ADAPTIVE=adaptive, COUNT_PAD=count_pad,
            DIVISOR=bool(divisor), ACC=xfg_acc(x.dtype), BLOCK=256, num_warps=4)
    return y if batched else y.squeeze(0)


def xfg_window(x, nd, kernel_size, stride, padding, dilation, ceil_mode):
    k = xfg_ntuple(kernel_size, nd)
    s = xfg_ntuple(stride, nd) if stride is not None and stride != [] and stride != () else list(k)
    p, d = xfg_ntuple(padding, nd), xfg_ntuple(dilation, nd)
    sizes = [xfg_pool_size(x.shape[x.dim() - nd + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    return k, s, p, d, sizes


def xfg_max_pool(x, nd, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """F.max_pool1d/2d/3d (values only)."""
    k, s, p, d, sizes = xfg_window(x, nd, kernel_size, stride, padding, dilation, ceil_mode)
    return xfg_pool_launch(x, nd, sizes, k, s, p, d, None, True, False, False)


def xfg_avg_pool(x, nd, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
    """F.avg_pool1d/2d/3d."""
    k, s, p, d, sizes = xfg_window(x, nd, kernel_size, stride, padding, 1, ceil_mode)
    return xfg_pool_launch(x, nd, sizes, k, s, p, d, divisor_override, False, False, count_include_pad)


def xfg_adaptive_pool(x, nd, output_size, is_max=False):
    """F.adaptive_avg_pool / adaptive_max_pool (values only); None in output_size keeps that size."""
    wanted = output_size if isinstance(output_size, (tuple, list)) else [output_size] * nd
    wanted = list(wanted) * nd if len(wanted) == 1 else list(wanted)
    inputs = [x.shape[x.dim() - nd + i] for i in range(nd)]
    sizes = [inputs[i] if wanted[i] is None else int(wanted[i]) for i in range(nd)]
    window = [-(-inputs[i] // max(sizes[i], 1)) + 1 for i in range(nd)]  # the widest adaptive window
    return xfg_pool_launch(x, nd, sizes, window, [1] * nd, [0] * nd, [1] * nd, None, is_max, True, False)
