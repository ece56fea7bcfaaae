import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 100_ConvTranspose3d_Clamp_Min_Divide (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, min_value, divisor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.min_value = min_value
        self.divisor = divisor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.clamp(x, min=self.min_value)
        x = x / self.divisor
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
stride = 2
padding = 1
min_value = -1.0
divisor = 2.0
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, min_value, divisor]
