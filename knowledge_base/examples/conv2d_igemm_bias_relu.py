"""Conv2d + bias + ReLU as one implicit-GEMM kernel (NCHW, any stride/padding/dilation, groups=1).

A convolution is a GEMM whose A operand is never built: rows are output pixels (M = N*OH*OW),
columns output channels (N = OC), the reduction runs over K = C*KH*KW. Each K tile's A block is
gathered straight from the input with the (c, kh, kw) -> (ih, iw) index map, masked where the
window leaves the image (that is the padding). The weight (OC, C, KH, KW) is already the K-major
B^T, so it needs no packing. 16-bit operands go to tl.dot as they are (fp32 accumulator); fp32
operands use "ieee" so the fp32 contract holds (TF32 only where the precision contract allows).
The epilogue (bias, ReLU) runs on the accumulator before the only store: one launch, no round trip.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv2d_igemm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    C, H, W, OC, OH, OW, M,
    sxn, sxc, sxh, sxw,  # input strides: NCHW or channels-last both work
    stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
    KH: tl.constexpr, KW: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # y[n, oc, oh, ow] = relu(b[oc] + sum_{c,kh,kw} x[n, c, oh*s - p + kh*d, ow*s - p + kw*d] * w[oc, c, kh, kw])
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(OC, BLOCK_N)
    width = GROUP_M * grid_n  # grouped order: neighbouring programs share weight panels in L2
    group = pid // width
    size_m = min(grid_m - group * GROUP_M, GROUP_M)
    pid_m = group * GROUP_M + (pid % width) % size_m
    pid_n = (pid % width) // size_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ow = rm % OW
    oh = (rm // OW) % OH
    n = (rm // (OW * OH)).to(tl.int64)
    K = C * KH * KW
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        c = rk // (KH * KW)
        kh = (rk // KW) % KH
        kw = rk % KW
        ih = oh[:, None] * stride_h - pad_h + kh[None, :] * dil_h
        iw = ow[:, None] * stride_w - pad_w + kw[None, :] * dil_w
        a_mask = (rm[:, None] < M) & (rk[None, :] < K) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + n[:, None] * sxn + c[None, :] * sxc + ih * sxh + iw * sxw, mask=a_mask, other=0.0)
        b_mask = (rk[:, None] < K) & (rn[None, :] < OC)
        b = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=b_mask, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)

    acc += tl.load(b_ptr + rn, mask=rn < OC, other=0.0).to(tl.float32)[None, :]
    acc = tl.maximum(acc, 0.0)
    y_off = (n[:, None] * OC + rn[None, :]) * (OH * OW) + (oh * OW + ow)[:, None]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < OC))


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              dilation=dilation)

    def forward(self, x):
        weight, bias = self.conv.weight.contiguous(), self.conv.bias
        n, c, h, w = x.shape
        oc, _, kh, kw = weight.shape
        (sh, sw), (ph, pw), (dh, dw) = self.conv.stride, self.conv.padding, self.conv.dilation
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        y = torch.empty((n, oc, oh, ow), device=x.device, dtype=x.dtype)
        m = n * oh * ow
        block_m, block_n, block_k = 64, 32, 32
        grid = (triton.cdiv(m, block_m) * triton.cdiv(oc, block_n),)
        _conv2d_igemm_kernel[grid](
            x, weight, bias, y, c, h, w, oc, oh, ow, m, *x.stride(), sh, sw, ph, pw, dh, dw,
            KH=kh, KW=kw, PRECISION="ieee" if x.dtype == torch.float32 else None,
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8, num_warps=4, num_stages=2)
        return y


batch_size = 8
in_channels = 3
out_channels = 16
height = width = 32
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
