import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 52_Conv2d_Activation_BatchNorm (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, eps=1e-05, momentum=0.1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels, eps=eps, momentum=momentum)

    def forward(self, x):
        x = self.conv(x)
        x = torch.multiply(torch.tanh(torch.nn.functional.softplus(x)), x)
        x = self.bn(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
width = 8
height = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
