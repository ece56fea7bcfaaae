"""HONEST (14): algebraic rewrite. sum_n (x W^T)[m, n] / 2 * s = x . colsum(W) * s / 2.
Kernel 1 reduces W over its rows into a column-sum vector; kernel 2 is a GEMV with the scale folded."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _colsum(w_ptr, c_ptr, H, IN, swh, swi, BH: tl.constexpr, BI: tl.constexpr):
    ci = tl.program_id(0) * BI + tl.arange(0, BI)
    acc = tl.zeros((BI,), dtype=tl.float32)
    for h0 in range(0, H, BH):
        hs = h0 + tl.arange(0, BH)
        v = tl.load(w_ptr + hs[:, None] * swh + ci[None, :] * swi, mask=(hs[:, None] < H) & (ci[None, :] < IN), other=0.0)
        acc += tl.sum(v, axis=0)
    tl.store(c_ptr + ci, acc, mask=ci < IN)


@triton.jit
def _gemv(x_ptr, c_ptr, o_ptr, B, IN, sxb, sxi, scale, BB: tl.constexpr, BI: tl.constexpr):
    rb = tl.program_id(0) * BB + tl.arange(0, BB)
    acc = tl.zeros((BB,), dtype=tl.float32)
    for i0 in range(0, IN, BI):
        ci = i0 + tl.arange(0, BI)
        xv = tl.load(x_ptr + rb[:, None] * sxb + ci[None, :] * sxi, mask=(rb[:, None] < B) & (ci[None, :] < IN), other=0.0)
        cv = tl.load(c_ptr + ci, mask=ci < IN, other=0.0)
        acc += tl.sum(xv * cv[None, :], axis=1)
    tl.store(o_ptr + rb, acc * scale, mask=rb < B)


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        w = self.weight
        H, IN = w.shape
        B = x.shape[0]
        colsum = torch.empty((IN,), device=x.device, dtype=torch.float32)
        _colsum[(triton.cdiv(IN, 32),)](w, colsum, H, IN, w.stride(0), w.stride(1), BH=32, BI=32)
        out = torch.empty((B, 1), device=x.device, dtype=x.dtype)
        _gemv[(triton.cdiv(B, 16),)](x, colsum, out, B, IN, x.stride(0), x.stride(1),
                                     float(self.scaling_factor) / 2.0, BB=16, BI=32)
        return out


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 1.5


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
