"""The implicit-GEMM convolution the conv-implicit-gemm recipe appends to a kernel file.

One kernel serves Conv2d and Conv3d (a 2D convolution is a 3D one with depth 1): rows are output
voxels (N*OD*OH*OW), columns one group's output channels (groups on grid axis 1), the reduction
runs over that group's C/groups*KD*KH*KW. Each K tile of the input is gathered through the
(c, kd, kh, kw) -> (id, ih, iw) map with zero padding as a load mask, any stride and dilation, the
(OC, C/groups, KD, KH, KW) weight used as K-major B^T without packing, 16-bit operands straight
into tl.dot with an fp32 accumulator ("ieee" for fp32 so the fp32 contract holds), and the bias
added on the accumulator before the one store. The launcher takes what nn.Conv2d/Conv3d or
F.conv2d/conv3d take.
"""

from __future__ import annotations

KERNEL = "_xf_conv_igemm_kernel"
LAUNCHER = "_xf_conv"

TEMPLATE = '''

@triton.jit
def _xf_conv_igemm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    CG, D, H, W, OC, OCG, OD, OH, OW, M,
    sxn, sxc, sxd, sxh, sxw,
    sd, sh, sw, pd, ph, pw, dd, dh, dw,
    KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, HAS_BIAS: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # y[n, oc, o] = b[oc] + sum over (c, k) in oc's group of x[n, c, o * s - p + k * d] * w[oc, c, k]
    pid = tl.program_id(0)
    group = tl.program_id(1)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(OCG, BLOCK_N)
    width = GROUP_M * grid_n  # grouped tile order: neighbouring programs share weight panels in L2
    first = (pid // width) * GROUP_M
    size_m = min(grid_m - first, GROUP_M)
    pid_m = first + (pid % width) % size_m
    pid_n = (pid % width) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    oc = group * OCG + rn
    ow = rm % OW
    oh = (rm // OW) % OH
    od = (rm // (OW * OH)) % OD
    n = (rm // (OW * OH * OD)).to(tl.int64)
    K = CG * KD * KH * KW
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        c = group * CG + rk // (KD * KH * KW)
        kd = (rk // (KH * KW)) % KD
        kh = (rk // KW) % KH
        kw = rk % KW
        i_d = od[:, None] * sd - pd + kd[None, :] * dd
        i_h = oh[:, None] * sh - ph + kh[None, :] * dh
        i_w = ow[:, None] * sw - pw + kw[None, :] * dw
        a_mask = (rm[:, None] < M) & (rk[None, :] < K) & (i_d >= 0) & (i_d < D) & (i_h >= 0) & (i_h < H) \\
            & (i_w >= 0) & (i_w < W)
        a = tl.load(x_ptr + n[:, None] * sxn + c[None, :] * sxc + i_d * sxd + i_h * sxh + i_w * sxw,
                    mask=a_mask, other=0.0)
        b = tl.load(w_ptr + oc[None, :].to(tl.int64) * K + rk[:, None], mask=(rk[:, None] < K) & (rn[None, :] < OCG),
                    other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    if HAS_BIAS:
        acc += tl.load(b_ptr + oc, mask=rn < OCG, other=0.0).to(tl.float32)[None, :]
    spatial = OD * OH * OW
    y_off = (n[:, None] * OC + oc[None, :]) * spatial + ((od * OH + oh) * OW + ow)[:, None]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < OCG))


def _xf_triple(value, nd, fill):
    values = [int(v) for v in value] if isinstance(value, (tuple, list)) else [int(value)] * nd
    return [fill] * (3 - nd) + values


def _xf_conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Zero-padded Conv2d/Conv3d by the implicit-GEMM kernel above (same arguments as F.conv2d/conv3d)."""
    nd = weight.dim() - 2
    k = [1] * (3 - nd) + [int(v) for v in weight.shape[2:]]
    s, d = _xf_triple(stride, nd, 1), _xf_triple(dilation, nd, 1)
    if isinstance(padding, str):  # 'valid', or 'same' where the total padding splits evenly
        if padding == "valid":
            p = [0, 0, 0]
        elif padding == "same" and all(v % 2 == 0 for v in [d[i] * (k[i] - 1) for i in range(3)]):
            p = [d[i] * (k[i] - 1) // 2 for i in range(3)]
        else:
            raise ValueError(f"padding={padding!r} with this kernel needs uneven padding, not supported here")
    else:
        p = _xf_triple(padding, nd, 0)
    x5 = x if nd == 3 else x.unsqueeze(2)
    w5 = (weight if nd == 3 else weight.unsqueeze(2)).contiguous()
    n, c, depth, height, width = x5.shape
    oc = w5.shape[0]
    o = [(size + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i, size in enumerate((depth, height, width))]
    y = torch.empty((n, oc, *o), device=x.device, dtype=x.dtype)
    m = n * o[0] * o[1] * o[2]
    ocg = oc // groups
    block_n = max(16, min(64, triton.next_power_of_2(ocg)))
    block_m = 128 if m >= 8192 else 64
    grid = (triton.cdiv(m, block_m) * triton.cdiv(ocg, block_n), groups)
    _xf_conv_igemm_kernel[grid](
        x5, w5, bias if bias is not None else w5, y, c // groups, depth, height, width, oc, ocg, *o, m,
        *x5.stride(), *s, *p, *d, KD=k[0], KH=k[1], KW=k[2], HAS_BIAS=bias is not None,
        PRECISION="ieee" if x.dtype == torch.float32 else None,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=32, GROUP_M=8, num_warps=4, num_stages=2)
    return y if nd == 3 else y.squeeze(2)
'''
