import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 44_ConvTranspose2d_Multiply_GlobalAvgPool_GlobalAvgPool_Mean (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.multiplier = multiplier

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.multiplier
        x = torch.mean(x, dim=[2, 3], keepdim=True)
        x = torch.mean(x, dim=[2, 3], keepdim=True)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
multiplier = 0.5
width = 8
height = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier]
