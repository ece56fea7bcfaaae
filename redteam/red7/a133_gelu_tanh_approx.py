"""ATTACK a133 (67): GELU replaced by its tanh approximation (another function: F.gelu(approximate="tanh")); fused into a per-plane mean, looping over the plane in 128-wide
blocks, one program per (n, c) plane; accumulation in a block vector, reduced once at the end."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return 0.5 * v * (1.0 + (2.0 * tl.sigmoid(2.0 * u) - 1.0))


@triton.jit
def _gelu_mean(x_ptr, out_ptr, HW, inv_hw, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, HW, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + plane * HW + offs, mask=offs < HW, other=0.0)
        acc += tl.where(offs < HW, _gelu(v), 0.0)
    tl.store(out_ptr + plane, tl.sum(acc, axis=0) * inv_hw)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x).contiguous()
        n, c, h, w = y.shape
        out = torch.empty((n, c), device=y.device, dtype=y.dtype)
        _gelu_mean[(n * c,)](y, out, h * w, 1.0 / (h * w), BLOCK=128)
        return out


batch_size = 128
in_channels = 8
out_channels = 64
height = width = 256
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
