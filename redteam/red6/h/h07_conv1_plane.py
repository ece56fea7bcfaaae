"""HONEST (1): conv stays in torch (allowed); ReLU + per-channel bias epilogue with a 2-D grid
(one row of programs per (n, c) plane, blocks along H*W): the channel comes from the program id."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_bias_planes(x_ptr, b_ptr, o_ptr, C, HW, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    blk = tl.program_id(1)
    ch = plane % C
    offs = blk * BLOCK + tl.arange(0, BLOCK)
    m = offs < HW
    base = plane.to(tl.int64) * HW
    v = tl.load(x_ptr + base + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + ch)
    tl.store(o_ptr + base + offs, tl.maximum(v, 0.0) + b, mask=m)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x).contiguous()
        n, c, h, w = y.shape
        out = torch.empty_like(y)
        block = 128
        _relu_bias_planes[(n * c, triton.cdiv(h * w, block))](y, self.bias.reshape(-1), out, c, h * w, BLOCK=block)
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
