"""KernelBench level 2, problem 67 (reference): Conv2d, then exact GELU, then global average pooling."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Valid convolution, erf-form GELU, and a mean over H and W: the output is [N, C]."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.nn.functional.gelu(x)
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        x = x.squeeze(-1).squeeze(-1)
        return x


batch_size = 128
in_channels = 8
out_channels = 64
height, width = 256, 256
kernel_size = 3


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size]
