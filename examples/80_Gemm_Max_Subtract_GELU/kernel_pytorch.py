"""Reference for KernelBench level 2, problem 80: Gemm_Max_Subtract_GELU.

A linear layer, a max over `max_dim` (kept), minus the mean over dim 1, then exact GELU.
With KernelBench's max_dim=1 the max leaves one column, so the mean over dim 1 equals it and the
output is exactly gelu(0) = 0 for every input (a degenerate problem, kept as KernelBench has it).
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """z = max(x @ W^T + b, dim=max_dim, keepdim); y = gelu(z - mean(z, dim=1, keepdim))."""

    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        x = torch.nn.functional.gelu(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
max_dim = 1


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]
