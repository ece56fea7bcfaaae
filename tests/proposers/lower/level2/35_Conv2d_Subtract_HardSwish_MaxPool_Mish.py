import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 35_Conv2d_Subtract_HardSwish_MaxPool_Mish (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, subtract_value, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.pool = nn.MaxPool2d(pool_kernel_size)
        self.subtract_value = subtract_value

    def forward(self, x):
        x = self.conv(x)
        x = x - self.subtract_value
        x = torch.nn.functional.hardswish(x)
        x = self.pool(x)
        x = torch.nn.functional.mish(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
height = 8
kernel_size = 3
subtract_value = 0.5
pool_kernel_size = 2
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value, pool_kernel_size]
