import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """KernelBench level 2, problem 27_Conv3d_HardSwish_GroupNorm_Mean (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups=4, bias=True):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=bias)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = F.hardswish(x)
        x = self.group_norm(x)
        x = torch.mean(x, dim=[2, 3, 4])
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 4
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
