"""HONEST h06 (1): conv kept in torch (allowed), epilogue as a 2-D grid over (plane, block) with the channel per program."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_bias_plane(x_ptr, bias_ptr, out_ptr, C, HW, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    c = plane % C
    b = tl.load(bias_ptr + c)
    v = tl.load(x_ptr + plane * HW + offs, mask=m, other=0.0)
    tl.store(out_ptr + plane * HW + offs, tl.maximum(v, 0.0) + b, mask=m)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x).contiguous()
        n, c, h, w = y.shape
        hw = math.prod((h, w))
        out = torch.empty_like(y)
        _relu_bias_plane[(n * c, triton.cdiv(hw, 64))](y, self.bias.reshape(-1).contiguous(), out, c, hw, BLOCK=64)
        return out


batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128
kernel_size = 3
bias_shape = (out_channels, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
