"""trunc(x * 4) + bias (reference): a quantiser's integer part."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.trunc(x * 4.0) + self.bias


batch_size = 9
n = 40


def get_inputs():
    return [torch.randn(batch_size, n)]


def get_init_inputs():
    return [n]
