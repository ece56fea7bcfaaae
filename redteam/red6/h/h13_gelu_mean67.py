"""HONEST (67): conv in torch (allowed); GELU fused into the global average pool, a 2-D grid of
(plane, chunk) programs writing per-chunk partial sums, then a second small kernel reducing the
partials of each plane (no atomics, deterministic)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_partial(x_ptr, p_ptr, HW, CHUNKS, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    offs = c * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + plane * HW + offs, mask=offs < HW, other=0.0)
    g = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(p_ptr + plane * CHUNKS + c, tl.sum(tl.where(offs < HW, g, 0.0), axis=0))


@triton.jit
def _finish(p_ptr, o_ptr, HW, CHUNKS, BC: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BC,), dtype=tl.float32)
    for c0 in range(0, CHUNKS, BC):
        ci = c0 + tl.arange(0, BC)
        acc += tl.load(p_ptr + plane * CHUNKS + ci, mask=ci < CHUNKS, other=0.0)
    tl.store(o_ptr + plane, tl.sum(acc, axis=0) / HW)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x).contiguous()
        n, c, h, w = y.shape
        block = 64
        chunks = triton.cdiv(h * w, block)
        partial = torch.empty((n * c, chunks), device=x.device, dtype=torch.float32)
        _gelu_partial[(n * c, chunks)](y, partial, h * w, chunks, BLOCK=block)
        out = torch.empty((n, c), device=x.device, dtype=x.dtype)
        _finish[(n * c,)](partial, out, h * w, chunks, BC=16)
        return out


batch_size = 128
in_channels = 8
out_channels = 64
height, width = 256, 256
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
