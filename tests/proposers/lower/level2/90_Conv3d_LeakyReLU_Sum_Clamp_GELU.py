import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 90_Conv3d_LeakyReLU_Sum_Clamp_GELU (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, sum_tensor_shape, negative_slope=0.01):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.sum_tensor = nn.Parameter(torch.randn(sum_tensor_shape))
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.conv(x)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.2)
        x = x + self.sum_tensor
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = torch.nn.functional.gelu(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
sum_tensor_shape = (out_channels, 1, 1, 1)
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, sum_tensor_shape]
