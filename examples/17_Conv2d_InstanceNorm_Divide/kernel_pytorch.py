"""KernelBench level 2, problem 17 (reference): Conv2d, then InstanceNorm2d, then divide by a constant."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Valid convolution, instance norm with nn.InstanceNorm2d's defaults, and a division.

    InstanceNorm2d(out_channels) defaults: affine=False, track_running_stats=False, eps=1e-5, so
    each (n, c) plane is normalized by its own mean and biased variance, in training and eval alike.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, divide_by: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.instance_norm(x)
        x = x / self.divide_by
        return x


batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128
kernel_size = 3
divide_by = 2.0


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size, divide_by]
