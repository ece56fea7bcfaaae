import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 65_Conv2d_AvgPool_Sigmoid_Sum (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.avg_pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.avg_pool(x)
        x = torch.sigmoid(x)
        x = torch.sum(x, dim=[1, 2, 3])
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
pool_kernel_size = 4
width = 8
height = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]
