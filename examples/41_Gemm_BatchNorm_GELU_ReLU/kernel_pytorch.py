"""KernelBench level 2, problem 41: Linear, BatchNorm1d (training mode), GELU, ReLU (reference)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(gelu(batchnorm(x @ W^T + b))); BatchNorm normalises with the batch's statistics."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.batch_norm(x)
        x = torch.nn.functional.gelu(x)
        x = torch.relu(x)
        return x


batch_size = 16384
in_features = 4096
out_features = 4096


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features]
