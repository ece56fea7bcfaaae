import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, negative_slope=0.01):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        x = torch.nn.functional.gelu(x)
        x = torch.sigmoid(x)
        x = x + self.bias
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
bias_shape = (out_channels, 1, 1, 1)
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
