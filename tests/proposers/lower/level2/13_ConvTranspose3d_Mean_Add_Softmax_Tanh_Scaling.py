import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 13_ConvTranspose3d_Mean_Add_Softmax_Tanh_Scaling (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.bias = nn.Parameter(torch.randn(1, out_channels, 1, 1, 1))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x.mean(dim=2, keepdim=True)
        x = x + self.bias
        x = torch.softmax(x, dim=1)
        x = torch.tanh(x)
        x = x * self.scaling_factor
        return x


batch_size = 2
in_channels = 3
out_channels = 8
depth = 6
height = 8
kernel_size = 3
stride = 1
padding = 1
scaling_factor = 2.0
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scaling_factor]
