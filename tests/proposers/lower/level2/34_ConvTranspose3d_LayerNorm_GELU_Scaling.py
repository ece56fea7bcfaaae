import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 34_ConvTranspose3d_LayerNorm_GELU_Scaling (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias, eps, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)
        self.layer_norm = nn.LayerNorm(out_channels, eps=eps)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.layer_norm(x)
        x = torch.nn.functional.gelu(x)
        x = x * self.scaling_factor
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 4
stride = 2
padding = 1
bias = True
eps = 1e-05
scaling_factor = 1.0
depth = 3
height = 4
width = 4


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias, eps, scaling_factor]
