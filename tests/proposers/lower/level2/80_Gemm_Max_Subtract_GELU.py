import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 80_Gemm_Max_Subtract_GELU (small sizes)."""

    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        x = torch.nn.functional.gelu(x)
        return x


batch_size = 2
in_features = 12
out_features = 32
max_dim = 1
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]
