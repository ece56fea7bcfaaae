"""KernelBench level 2, problem 1 (reference): Conv2d, then ReLU, then a per-channel bias add."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Valid (unpadded, stride 1) convolution, ReLU, and a learned bias broadcast over H and W."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias_shape: tuple[int, ...]):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.relu(x)
        x = x + self.bias
        return x


batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128
kernel_size = 3
bias_shape = (out_channels, 1, 1)


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size, bias_shape]
