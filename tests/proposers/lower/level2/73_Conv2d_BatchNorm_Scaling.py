import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 73_Conv2d_BatchNorm_Scaling (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = x * self.scaling_factor
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
scaling_factor = 2.0
width = 8
height = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor]
