"""KernelBench level 2, problem 30: Linear, GroupNorm over feature groups, Hardtanh (reference)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """y = clamp(groupnorm(x @ W^T + b), hardtanh_min, hardtanh_max); groups split the features."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, hardtanh_min: float,
                 hardtanh_max: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.group_norm(x)
        x = self.hardtanh(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 16
hardtanh_min = -2.0
hardtanh_max = 2.0


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features, num_groups, hardtanh_min, hardtanh_max]
