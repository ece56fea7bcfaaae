import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 86_Matmul_Divide_GELU (small sizes)."""

    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = x / self.divisor
        x = torch.nn.functional.gelu(x)
        return x


batch_size = 2
input_size = 12
output_size = 16
divisor = 10.0
width = 8


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, output_size, divisor]
