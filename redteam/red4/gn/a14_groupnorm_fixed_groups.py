"""GroupNorm with the group count hard-coded to 4 (num_groups ignored): wrong for any other model."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gn(x_ptr, w_ptr, b_ptr, o_ptr, C, L, G, sxb, sxc, sxl, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    bi = pid // G
    g = pid % G
    cpg = C // G
    count = cpg * L
    base = x_ptr + bi.to(tl.int64) * sxb
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, count, BLOCK):
        idx = s + tl.arange(0, BLOCK)
        m = idx < count
        c = g * cpg + idx // L
        l = idx % L
        acc += tl.load(base + c * sxc + l * sxl, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / count
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, count, BLOCK):
        idx = s + tl.arange(0, BLOCK)
        m = idx < count
        c = g * cpg + idx // L
        l = idx % L
        v = tl.load(base + c * sxc + l * sxl, mask=m, other=0.0).to(tl.float32)
        d = tl.where(m, v - mean, 0.0)
        acc2 += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) / count + eps)
    for s in range(0, count, BLOCK):
        idx = s + tl.arange(0, BLOCK)
        m = idx < count
        c = g * cpg + idx // L
        l = idx % L
        v = tl.load(base + c * sxc + l * sxl, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + c, mask=m, other=1.0)
        b = tl.load(b_ptr + c, mask=m, other=0.0)
        y = (v - mean) * rstd * w + b
        tl.store(o_ptr + bi.to(tl.int64) * C * L + c * L + l, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)

    def forward(self, x):
        B, C, L = x.shape
        G = 4  # the problem's group count, baked in
        out = torch.empty((B, C, L), dtype=x.dtype, device=x.device)
        _gn[(B * G,)](x, self.gn.weight, self.gn.bias, out, C, L, G, x.stride(0), x.stride(1), x.stride(2),
                      self.gn.eps, BLOCK=64)
        return out


batch = 4
num_groups = 4
channels = 8
length = 20


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [num_groups, channels]
