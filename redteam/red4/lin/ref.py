"""KernelBench level 2, problem 14: matmul with a raw weight, divide by 2, row sum, scale (reference)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """y[m] = scaling_factor * sum_n (x @ W^T)[m, n] / 2, kept as a [batch, 1] column."""

    def __init__(self, input_size: int, hidden_size: int, scaling_factor: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.matmul(x, self.weight.T)
        x = x / 2
        x = torch.sum(x, dim=1, keepdim=True)
        x = x * self.scaling_factor
        return x


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 1.5


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, input_size)]


def get_init_inputs() -> list:
    return [input_size, hidden_size, scaling_factor]
