import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 56_Matmul_Sigmoid_Sum (small sizes)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.linear(x)
        x = torch.sigmoid(x)
        x = torch.sum(x, dim=1, keepdim=True)
        return x


batch_size = 2
input_size = 12
hidden_size = 32
width = 8


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]
