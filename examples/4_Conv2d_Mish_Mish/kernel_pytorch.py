"""KernelBench level 2, problem 4 (reference): Conv2d, then Mish applied twice."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Valid (unpadded, stride 1) convolution followed by two Mish activations."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.nn.functional.mish(x)
        x = torch.nn.functional.mish(x)
        return x


batch_size = 64
in_channels = 64
out_channels = 128
height = width = 256
kernel_size = 3


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size]
