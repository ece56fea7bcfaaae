import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 61_ConvTranspose3d_ReLU_GroupNorm (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, groups, bias, num_groups=4):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, bias=bias)
        self.relu = nn.ReLU()
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.relu(x)
        x = self.group_norm(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
groups = 4
bias = False
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, bias]
