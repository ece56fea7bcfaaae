import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 41_Gemm_BatchNorm_GELU_ReLU (small sizes)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        x = self.gemm(x)
        x = self.batch_norm(x)
        x = torch.nn.functional.gelu(x)
        x = torch.relu(x)
        return x


batch_size = 2
in_features = 12
out_features = 32
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
