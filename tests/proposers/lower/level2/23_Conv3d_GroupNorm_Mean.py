import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 23_Conv3d_GroupNorm_Mean (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = self.group_norm(x)
        x = x.mean(dim=[1, 2, 3, 4])
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
num_groups = 4
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]
