import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier_shape, negative_slope=0.01):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU(negative_slope=0.2)
        self.max_pool = nn.MaxPool3d(kernel_size=2)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.leaky_relu(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        x = self.max_pool(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
multiplier_shape = (out_channels, 1, 1, 1)
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier_shape]
