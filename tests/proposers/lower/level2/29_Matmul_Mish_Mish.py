import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 29_Matmul_Mish_Mish (small sizes)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.linear(x)
        x = torch.nn.functional.mish(x)
        x = torch.nn.functional.mish(x)
        return x


batch_size = 2
in_features = 12
out_features = 32
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
