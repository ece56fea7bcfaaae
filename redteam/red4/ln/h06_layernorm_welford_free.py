"""Honest LayerNorm: per row, mean then centred variance over chunks (two passes), affine, eps from the module."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln(x_ptr, w_ptr, b_ptr, o_ptr, N, sxm, sxn, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * sxm
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, N, BLOCK):
        rn = s + tl.arange(0, BLOCK)
        acc += tl.load(base + rn * sxn, mask=rn < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, N, BLOCK):
        rn = s + tl.arange(0, BLOCK)
        v = tl.load(base + rn * sxn, mask=rn < N, other=0.0).to(tl.float32)
        d = tl.where(rn < N, v - mean, 0.0)
        acc2 += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
    for s in range(0, N, BLOCK):
        rn = s + tl.arange(0, BLOCK)
        m = rn < N
        v = tl.load(base + rn * sxn, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + rn, mask=m, other=0.0)
        b = tl.load(b_ptr + rn, mask=m, other=0.0)
        tl.store(o_ptr + row.to(tl.int64) * N + rn, (v - mean) * rstd * w + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.ln = nn.LayerNorm(n, eps=eps)

    def forward(self, x):
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        _ln[(M,)](x, self.ln.weight, self.ln.bias, out, N, x.stride(0), x.stride(1), self.ln.eps, BLOCK=32)
        return out


m = 16
n = 64
eps = 1e-5


def get_inputs():
    return [torch.randn(m, n)]


def get_init_inputs():
    return [n, eps]
