import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 70_Gemm_Sigmoid_Scaling_ResidualAdd (small sizes)."""

    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.gemm(x)
        original_x = x
        x = torch.sigmoid(x)
        x = x * self.scaling_factor
        x = x + original_x
        return x


batch_size = 2
input_size = 12
hidden_size = 32
scaling_factor = 2.0
width = 8


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]
