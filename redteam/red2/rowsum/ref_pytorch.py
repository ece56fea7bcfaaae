"""Row sum of x * scale (reference)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.scale).sum(dim=-1)


batch_size = 11
n = 150


def get_inputs():
    return [torch.randn(batch_size, n)]


def get_init_inputs():
    return [n]
