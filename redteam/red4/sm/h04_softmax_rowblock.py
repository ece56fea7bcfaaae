"""Honest: one program per row, the whole row in one block (next power of two), max-subtracted."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, o_ptr, N, sxm, sxn, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    rn = tl.arange(0, BLOCK)
    m = rn < N
    x = tl.load(x_ptr + row.to(tl.int64) * sxm + rn * sxn, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(o_ptr + row.to(tl.int64) * N + rn, y, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        _softmax[(M,)](x, out, N, x.stride(0), x.stride(1), BLOCK=triton.next_power_of_2(N))
        return out


m = 16
n = 100


def get_inputs():
    return [torch.randn(m, n)]


def get_init_inputs():
    return []
