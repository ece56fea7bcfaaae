"""Convolutions, regular and transposed, 1D to 3D, as implicit GEMMs with every hyperparameter at run time.

The knowledge base's implicit-GEMM template (rules/conv_template.py) with the kernel size made a run-time
value too: rows are output positions (N*OD*OH*OW), columns one group's output channels (groups on grid
axis 1), the reduction runs over that group's input channels times the kernel taps. A 1D or 2D
convolution is a 3D one with size-1 leading dims. The input tile is gathered through
(c, kd, kh, kw) -> input position with zero padding as a load mask:

    regular:    i = o * s - p + k * d
    transposed: i = (o + p - k * d) / s, where that divides exactly and lands inside the input

so a transposed convolution is computed directly (no phase rewrite, no scatter): each output gathers
the taps that reach it. Weights are read through their strides ((OC, C/g, k...) regular,
(C, OC/g, k...) transposed), never repacked.
"""

import torch
import triton
import triton.language as tl

from xe_forge.proposers.lower.general.runtime.common import (
    xfg_acc,
    xfg_block,
    xfg_cast,
    xfg_dot_precision,
    xfg_ntuple,
    xfg_pad_front,
)


@triton.jit
def xfg_conv_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, CG, OCG, D, H, W, OD, OH, OW, KD, KH, KW,
                    sxn, sxc, sxd, sxh, sxw, sw0, sw1, swd, swh, sww, syn, syc, syd, syh, syw,
                    sd, sh, sw, pd, ph, pw, dd, dh, dw,
                    TRANSPOSED: tl.constexpr, HAS_BIAS: tl.constexpr, PRECISION: tl.constexpr,
                    ACC: tl.constexpr, UPCAST: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    group = tl.program_id(1)
    grid_n = tl.cdiv(OCG, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ow = rm % OW
    rest = rm // OW
    oh = rest % OH
    rest = rest // OH
    od = rest % OD
    n = (rest // OD).to(tl.int64)
    taps = KD * KH * KW
    K = CG * taps
    oc = group * OCG + rn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        c = rk // taps
        tap = rk % taps
        kd = tap // (KH * KW)
        kh = (tap // KW) % KH
        kw = tap % KW
        if TRANSPOSED:
            td = od[:, None] + pd - kd[None, :] * dd
            th = oh[:, None] + ph - kh[None, :] * dh
            tw = ow[:, None] + pw - kw[None, :] * dw
            inside = (td >= 0) & (th >= 0) & (tw >= 0) & (td % sd == 0) & (th % sh == 0) & (tw % sw == 0)
            i_d = td // sd
            i_h = th // sh
            i_w = tw // sw
        else:
            i_d = od[:, None] * sd - pd + kd[None, :] * dd
            i_h = oh[:, None] * sh - ph + kh[None, :] * dh
            i_w = ow[:, None] * sw - pw + kw[None, :] * dw
            inside = (i_d >= 0) & (i_h >= 0) & (i_w >= 0)
        inside = inside & (i_d < D) & (i_h < H) & (i_w < W)
        a_mask = (rm[:, None] < M) & (rk[None, :] < K) & inside
        ci = (group * CG + c).to(tl.int64)
        a = tl.load(x_ptr + n[:, None] * sxn + ci[None, :] * sxc + i_d.to(tl.int64) * sxd + i_h.to(tl.int64) * sxh
                    + i_w.to(tl.int64) * sxw, mask=a_mask, other=0.0)
        taps_off = kd[:, None] * swd + kh[:, None] * swh + kw[:, None] * sww
        if TRANSPOSED:
            w_off = ci[:, None] * sw0 + rn[None, :].to(tl.int64) * sw1 + taps_off
        else:
            w_off = oc[None, :].to(tl.int64) * sw0 + c[:, None].to(tl.int64) * sw1 + taps_off
        b = tl.load(w_ptr + w_off, mask=(rk[:, None] < K) & (rn[None, :] < OCG), other=0.0)
        if UPCAST:  # the interpreter has no 16-bit dot: the products are exact in fp32 either way
            a = a.to(ACC)
            b = b.to(ACC)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    if HAS_BIAS:
        acc += tl.load(b_ptr + oc, mask=rn < OCG, other=0.0).to(ACC)[None, :]
    y_off = n[:, None] * syn + oc[None, :].to(tl.int64) * syc + (od * syd + oh * syh + ow * syw).to(tl.int64)[:, None]
    tl.store(y_ptr + y_off, xfg_cast(acc, y_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < OCG))


def xfg_as_3d(t, nd):
    """A (N, C, *nd sizes) tensor viewed as (N, C, D, H, W) with size-1 leading spatial dims."""
    for _ in range(3 - nd):
        t = t.unsqueeze(2)
    return t


def xfg_conv_launch(x, weight, bias, out, k, s, p, d, groups, transposed):
    """Launch the implicit GEMM for a batched input; every list is 3 long (depth, height, width)."""
    nd = weight.dim() - 2
    x5, w5, y5 = xfg_as_3d(x, nd), xfg_as_3d(weight, nd), xfg_as_3d(out, nd)
    n, c = x5.shape[0], x5.shape[1]
    oc = y5.shape[1]
    cg, ocg = c // groups, oc // groups
    m = n * y5.shape[2] * y5.shape[3] * y5.shape[4]
    if out.numel() == 0:
        return out
    block_m = xfg_block(m, 16, 256 if x.device.type == "cpu" else 64)  # the interpreter: fewer, larger programs
    block_n = xfg_block(ocg, 16, 64)
    block_k = xfg_block(cg * k[0] * k[1] * k[2], 16, 32)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(ocg, block_n), groups)
    xfg_conv_kernel[grid](x5, w5, bias if bias is not None else w5, y5, m, cg, ocg, *x5.shape[2:], *y5.shape[2:],
                          *k, *x5.stride(), *w5.stride(), *y5.stride(), *s, *p, *d, TRANSPOSED=transposed,
                          HAS_BIAS=bias is not None, PRECISION=xfg_dot_precision(x.dtype, x.device),
                          ACC=xfg_acc(x.dtype), UPCAST=x.device.type == "cpu", BLOCK_M=block_m, BLOCK_N=block_n,
                          BLOCK_K=block_k, num_warps=4)
    return out


def xfg_conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """F.conv1d/2d/3d with zero padding ('valid', 'same', ints or per-dim tuples)."""
    nd = weight.dim() - 2
    batched = x.dim() == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    k = [int(v) for v in weight.shape[2:]]
    s, d = xfg_ntuple(stride, nd), xfg_ntuple(dilation, nd)
    if isinstance(padding, str):
        total = [0] * nd if padding == "valid" else [d[i] * (k[i] - 1) for i in range(nd)]
        left = [t // 2 for t in total]
    else:
        left = xfg_ntuple(padding, nd)
        total = [2 * v for v in left]
    sizes = [(x.shape[2 + i] + total[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    out = torch.empty((x.shape[0], weight.shape[0], *[max(v, 0) for v in sizes]), device=x.device, dtype=x.dtype)
    xfg_conv_launch(x, weight, bias, out, xfg_pad_front(k, 3, 1), xfg_pad_front(s, 3, 1),
                    xfg_pad_front(left, 3, 0), xfg_pad_front(d, 3, 1), groups, False)
    return out if batched else out.squeeze(0)


def xfg_conv_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """F.conv_transpose1d/2d/3d: out = (in - 1) * s - 2p + d (k - 1) + output_padding + 1."""
    nd = weight.dim() - 2
    batched = x.dim() == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    k = [int(v) for v in weight.shape[2:]]
    s, p, d = xfg_ntuple(stride, nd), xfg_ntuple(padding, nd), xfg_ntuple(dilation, nd)
    op = xfg_ntuple(output_padding, nd)
    sizes = [(x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(nd)]
    out = torch.empty((x.shape[0], weight.shape[1] * groups, *[max(v, 0) for v in sizes]), device=x.device,
                      dtype=x.dtype)
    xfg_conv_launch(x, weight, bias, out, xfg_pad_front(k, 3, 1), xfg_pad_front(s, 3, 1),
                    xfg_pad_front(p, 3, 0), xfg_pad_front(d, 3, 1), groups, True)
    return out if batched else out.squeeze(0)
