"""KernelBench level 2, problem 29: Linear followed by Mish applied twice (reference)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """y = mish(mish(x @ W^T + b)), mish(v) = v * tanh(softplus(v))."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.nn.functional.mish(x)
        x = torch.nn.functional.mish(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features]
