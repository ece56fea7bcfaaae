import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 24_Conv3d_Min_Softmax (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, dim):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.dim = dim

    def forward(self, x):
        x = self.conv(x)
        x = torch.min(x, dim=self.dim)[0]
        x = torch.softmax(x, dim=1)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
dim = 2
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, dim]
