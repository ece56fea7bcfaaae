"""A large GEMM with a bias and a residual: y = x @ W^T + b + r (the check-time benchmark of issue 25)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.proj = nn.Linear(features, features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.proj(x) + residual


tokens = 16384
features = 4096


def get_inputs():
    return [torch.randn(tokens, features), torch.randn(tokens, features)]


def get_init_inputs():
    return [features]
