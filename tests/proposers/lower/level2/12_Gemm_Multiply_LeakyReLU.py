import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 12_Gemm_Multiply_LeakyReLU (small sizes)."""

    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        self.multiplier = multiplier

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        return x


batch_size = 2
in_features = 12
out_features = 32
multiplier = 2.0
negative_slope = 0.1
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]
