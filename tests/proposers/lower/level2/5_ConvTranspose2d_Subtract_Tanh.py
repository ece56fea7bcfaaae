import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 5_ConvTranspose2d_Subtract_Tanh (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, stride=1, padding=0, output_padding=0):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x - self.bias
        x = torch.tanh(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
height = 8
kernel_size = 4
bias_shape = (out_channels, 1, 1)
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
