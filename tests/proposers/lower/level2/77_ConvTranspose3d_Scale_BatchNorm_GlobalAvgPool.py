import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, scale_factor, eps=1e-05, momentum=0.1):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)
        self.batch_norm = nn.BatchNorm3d(out_channels, eps=eps, momentum=momentum)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.scale_factor
        x = self.batch_norm(x)
        x = self.global_avg_pool(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 5
scale_factor = 2.0
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]
