"""HONEST (17): conv in torch (allowed); InstanceNorm + divide in one Triton kernel per (n, c) plane:
pass 1 the mean, pass 2 the centred variance, pass 3 normalise with 1/divide_by folded into rstd."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _inorm_div(x_ptr, o_ptr, HW, eps, inv_div, BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    base = p * HW
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, HW, BLOCK):
        o = i + tl.arange(0, BLOCK)
        s += tl.load(x_ptr + base + o, mask=o < HW, other=0.0)
    mean = tl.sum(s, axis=0) / HW
    q = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, HW, BLOCK):
        o = i + tl.arange(0, BLOCK)
        d = tl.load(x_ptr + base + o, mask=o < HW, other=0.0) - mean
        q += tl.where(o < HW, d * d, 0.0)
    scale = inv_div / tl.sqrt(tl.sum(q, axis=0) / HW + eps)
    for i in range(0, HW, BLOCK):
        o = i + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + base + o, mask=o < HW, other=0.0)
        tl.store(o_ptr + base + o, (v - mean) * scale, mask=o < HW)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        y = self.conv(x).contiguous()
        n, c, h, w = y.shape
        out = torch.empty_like(y)
        _inorm_div[(n * c,)](y, out, h * w, float(self.instance_norm.eps), 1.0 / float(self.divide_by), BLOCK=64)
        return out


batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128
kernel_size = 3
divide_by = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divide_by]
