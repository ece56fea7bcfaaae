"""Honest: sum_n (x W^T)[m, n] = x . colsum(W); both reductions in Triton."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _colsum(w_ptr, o_ptr, H, I, swh, swi, BLOCK_H: tl.constexpr, BLOCK_I: tl.constexpr):
    pi = tl.program_id(0)
    ri = pi * BLOCK_I + tl.arange(0, BLOCK_I)
    acc = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        rh = h0 + tl.arange(0, BLOCK_H)
        m = (rh[:, None] < H) & (ri[None, :] < I)
        w = tl.load(w_ptr + rh[:, None] * swh + ri[None, :] * swi, mask=m, other=0.0)
        acc += tl.sum(w.to(tl.float32), axis=0)
    tl.store(o_ptr + ri, acc, mask=ri < I)


@triton.jit
def _rowdot(x_ptr, v_ptr, o_ptr, I, sxm, sxi, scale, BLOCK_I: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for i0 in range(0, I, BLOCK_I):
        ri = i0 + tl.arange(0, BLOCK_I)
        m = ri < I
        x = tl.load(x_ptr + row * sxm + ri * sxi, mask=m, other=0.0).to(tl.float32)
        v = tl.load(v_ptr + ri, mask=m, other=0.0)
        acc += x * v
    s = tl.sum(acc, axis=0) * scale
    tl.store(o_ptr + row, s.to(o_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, scaling_factor: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        H, I = self.weight.shape
        M = x.shape[0]
        v = torch.empty((I,), dtype=torch.float32, device=x.device)
        _colsum[(triton.cdiv(I, 32),)](self.weight, v, H, I, self.weight.stride(0), self.weight.stride(1),
                                       BLOCK_H=16, BLOCK_I=32)
        out = torch.empty((M, 1), dtype=x.dtype, device=x.device)
        _rowdot[(M,)](x, v, out, I, x.stride(0), x.stride(1), self.scaling_factor / 2, BLOCK_I=64)
        return out


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 1.5


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
