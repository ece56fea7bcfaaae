"""KernelBench-style problem: conv, add a per-channel bias, scale, gather a row index."""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 3
out_channels = 8
height = width = 10
kernel_size = 3
bias_shape = (out_channels, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, eps):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.eps = eps

    def forward(self, x, scale, idx):
        y = (self.conv(x) + self.bias) * scale.view(1, -1, 1, 1)
        return y[idx % y.shape[0]] + self.eps


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width), torch.rand(out_channels),
            torch.randint(0, batch_size, (batch_size,))]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape, 1e-5]
