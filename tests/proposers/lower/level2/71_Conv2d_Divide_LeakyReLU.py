import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 71_Conv2d_Divide_LeakyReLU (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, divisor, negative_slope=0.01):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.conv(x)
        x = x / self.divisor
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
divisor = 2
width = 8
height = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divisor]
