import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 17_Conv2d_InstanceNorm_Divide (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        x = self.conv(x)
        x = self.instance_norm(x)
        x = x / self.divide_by
        return x


batch_size = 2
in_channels = 3
out_channels = 8
height = 8
kernel_size = 3
divide_by = 2.0
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divide_by]
