"""KernelBench level 2, problem 37: Linear, Swish, bias add, GroupNorm over feature groups (reference)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """v = x @ W^T + b; y = groupnorm(sigmoid(v) * v + bias)."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, bias_shape: tuple[int, ...]):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = torch.sigmoid(x) * x
        x = x + self.bias
        x = self.group_norm(x)
        return x


batch_size = 32768
in_features = 1024
out_features = 4096
num_groups = 64
bias_shape = (out_features,)


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features, num_groups, bias_shape]
