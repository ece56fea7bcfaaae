import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 63_Gemm_ReLU_Divide (small sizes)."""

    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = torch.relu(x)
        x = x / self.divisor
        return x


batch_size = 2
in_features = 12
out_features = 32
divisor = 2.0
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
