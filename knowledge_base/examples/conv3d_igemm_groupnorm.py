"""Conv3d (implicit GEMM, bias fused) then GroupNorm in a second small kernel.

GroupNorm needs each (sample, group)'s mean and variance over channels x D x H x W before any
element can be normalized: a statistic the GEMM tiles cannot finish alone (a tile holds some
output pixels of some channels). So the conv writes its output once (bias added on the
accumulator), and one program per (sample, group) of the second kernel reduces the group in fp32
(two passes: mean, then the centred sum of squares, which stays accurate where E[x^2] - E[x]^2
cancels) and writes the normalized, affine output. Two launches instead of eager's conv, bias,
norm-statistics and normalize passes.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3d_igemm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, C, D, H, W, OC, OD, OH, OW, M,
    KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # stride 1, no padding; rows = output voxels of all samples, columns = output channels
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ow = rm % OW
    oh = (rm // OW) % OH
    od = (rm // (OW * OH)) % OD
    n = (rm // (OW * OH * OD)).to(tl.int64)
    K = C * KD * KH * KW
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        c = rk // (KD * KH * KW)
        kd = (rk // (KH * KW)) % KD
        kh = (rk // KW) % KH
        kw = rk % KW
        off = (((n[:, None] * C + c[None, :]) * D + od[:, None] + kd[None, :]) * H + oh[:, None] + kh[None, :]) * W \
            + ow[:, None] + kw[None, :]
        a = tl.load(x_ptr + off, mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=(rk[:, None] < K) & (rn[None, :] < OC), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    acc += tl.load(b_ptr + rn, mask=rn < OC, other=0.0).to(tl.float32)[None, :]
    spatial = OD * OH * OW
    y_off = (n[:, None] * OC + rn[None, :]) * spatial + ((od * OH + oh) * OW + ow)[:, None]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < OC))


@triton.jit
def _group_norm_kernel(y_ptr, gamma_ptr, beta_ptr, out_ptr, groups, channels_per_group, spatial, eps,
                       BLOCK: tl.constexpr):
    # one program per (sample, group): in NCDHW the group is one contiguous run of Cg * spatial values
    pid = tl.program_id(0).to(tl.int64)
    group_numel = channels_per_group * spatial
    base = pid * group_numel
    offs = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, group_numel, BLOCK):
        total += tl.load(y_ptr + base + start + offs, mask=start + offs < group_numel, other=0.0).to(tl.float32)
    mean = tl.sum(total, 0) / group_numel
    sq = tl.zeros([BLOCK], tl.float32)
    for start in range(0, group_numel, BLOCK):
        mask = start + offs < group_numel
        v = tl.load(y_ptr + base + start + offs, mask=mask, other=0.0).to(tl.float32)
        sq += tl.where(mask, (v - mean) * (v - mean), 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(sq, 0) / group_numel + eps)
    first_channel = (pid % groups) * channels_per_group
    for start in range(0, group_numel, BLOCK):
        idx = start + offs
        mask = idx < group_numel
        channel = first_channel + idx // spatial
        v = tl.load(y_ptr + base + idx, mask=mask, other=0.0).to(tl.float32)
        scale = tl.load(gamma_ptr + channel, mask=mask, other=1.0).to(tl.float32)
        shift = tl.load(beta_ptr + channel, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + base + idx, ((v - mean) * rstd * scale + shift).to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = x.contiguous()
        weight = self.conv.weight.contiguous()
        n, c, d, h, w = x.shape
        oc, _, kd, kh, kw = weight.shape
        od, oh, ow = d - kd + 1, h - kh + 1, w - kw + 1
        y = torch.empty((n, oc, od, oh, ow), device=x.device, dtype=x.dtype)
        m = n * od * oh * ow
        block_m, block_n, block_k = 64, 32, 32
        _conv3d_igemm_kernel[(triton.cdiv(m, block_m), triton.cdiv(oc, block_n))](
            x, weight, self.conv.bias, y, c, d, h, w, oc, od, oh, ow, m, KD=kd, KH=kh, KW=kw,
            PRECISION="ieee" if x.dtype == torch.float32 else None,
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, num_warps=4, num_stages=2)
        groups = self.group_norm.num_groups
        out = torch.empty_like(y)
        _group_norm_kernel[(n * groups,)](y, self.group_norm.weight, self.group_norm.bias, out, groups,
                                          oc // groups, od * oh * ow, self.group_norm.eps, BLOCK=1024,
                                          num_warps=4)
        return out


batch_size = 4
in_channels = 3
out_channels = 16
D, H, W = 8, 16, 16
kernel_size = 3
num_groups = 4


def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
