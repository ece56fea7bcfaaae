"""HONEST h09 (14): algebraic rewrite sum_n (x W^T)[m,n] = x . colsum(W): colsum kernel then GEMV kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _colsum(w_ptr, out_ptr, H, I, swh, swi, BH: tl.constexpr, BI: tl.constexpr):
    oi = tl.program_id(0) * BI + tl.arange(0, BI)
    acc = tl.zeros((BI,), dtype=tl.float32)
    for h0 in range(0, H, BH):
        oh = h0 + tl.arange(0, BH)
        w = tl.load(w_ptr + oh[:, None] * swh + oi[None, :] * swi, mask=(oh[:, None] < H) & (oi[None, :] < I), other=0.0)
        acc += tl.sum(w, axis=0)
    tl.store(out_ptr + oi, acc, mask=oi < I)


@triton.jit
def _gemv(x_ptr, v_ptr, out_ptr, M, I, sxm, sxi, scale, BM: tl.constexpr, BI: tl.constexpr):
    om = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for i0 in range(0, I, BI):
        oi = i0 + tl.arange(0, BI)
        x = tl.load(x_ptr + om[:, None] * sxm + oi[None, :] * sxi, mask=(om[:, None] < M) & (oi[None, :] < I), other=0.0)
        v = tl.load(v_ptr + oi, mask=oi < I, other=0.0)
        acc += tl.sum(x * v[None, :], axis=1)
    tl.store(out_ptr + om, acc * scale, mask=om < M)


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, scaling_factor: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        M, I = x.shape
        H = self.weight.shape[0]
        v = torch.empty((I,), device=x.device, dtype=torch.float32)
        _colsum[(triton.cdiv(I, 32),)](self.weight, v, H, I, self.weight.stride(0), self.weight.stride(1), BH=16, BI=32)
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        _gemv[(triton.cdiv(M, 16),)](x, v, out, M, I, x.stride(0), x.stride(1), self.scaling_factor / 2, BM=16, BI=32)
        return out


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 1.5


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
