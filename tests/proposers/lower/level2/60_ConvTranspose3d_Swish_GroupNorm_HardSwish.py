import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 60_ConvTranspose3d_Swish_GroupNorm_HardSwish (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups, eps, num_groups=4, bias=True):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels, eps=eps)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.sigmoid(x) * x
        x = self.group_norm(x)
        x = torch.nn.functional.hardswish(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
stride = 2
padding = 1
groups = 4
eps = 1e-05
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups, eps]
