"""Honest: conv in torch (allowed self.conv), epilogue with a 2-D grid (plane, hw block): the channel is
per program, so no per-element division; strided conv output handled by passing strides."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_bias_planes(x_ptr, b_ptr, o_ptr, C, H, W, sxn, sxc, sxh, sxw, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    blk = tl.program_id(1)
    n = plane // C
    c = plane % C
    hw = blk * BLOCK + tl.arange(0, BLOCK)
    m = hw < H * W
    h = hw // W
    w = hw % W
    v = tl.load(x_ptr + n * sxn + c * sxc + h * sxh + w * sxw, mask=m, other=0.0)
    bias = tl.load(b_ptr + c)
    tl.store(o_ptr + plane * H * W + hw, tl.maximum(v, 0.0) + bias, mask=m)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x)
        N, C, H, W = y.shape
        out = torch.empty((N, C, H, W), device=y.device, dtype=y.dtype)
        _relu_bias_planes[(N * C, triton.cdiv(H * W, 64))](y, self.bias, out, C, H, W,
                                                           y.stride(0), y.stride(1), y.stride(2), y.stride(3),
                                                           BLOCK=64)
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
