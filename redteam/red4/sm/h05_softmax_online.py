"""Honest: online softmax (running max and rescaled sum) over column chunks, then a normalising pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _online_softmax(x_ptr, o_ptr, N, sxm, sxn, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * sxm
    m_i = tl.full((BLOCK,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, N, BLOCK):
        rn = s + tl.arange(0, BLOCK)
        x = tl.load(base + rn * sxn, mask=rn < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_i, x)
        alpha = tl.where(m_new == -float("inf"), 0.0, tl.exp(m_i - m_new))
        p = tl.where(m_new == -float("inf"), 0.0, tl.exp(x - m_new))
        l_i = l_i * alpha + p
        m_i = m_new
    mx = tl.max(m_i, axis=0)
    l = tl.sum(l_i * tl.exp(m_i - mx), axis=0)
    for s in range(0, N, BLOCK):
        rn = s + tl.arange(0, BLOCK)
        x = tl.load(base + rn * sxn, mask=rn < N, other=-float("inf")).to(tl.float32)
        tl.store(o_ptr + row.to(tl.int64) * N + rn, tl.exp(x - mx) / l, mask=rn < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        _online_softmax[(M,)](x, out, N, x.stride(0), x.stride(1), BLOCK=32)
        return out


m = 16
n = 100


def get_inputs():
    return [torch.randn(m, n)]


def get_init_inputs():
    return []
