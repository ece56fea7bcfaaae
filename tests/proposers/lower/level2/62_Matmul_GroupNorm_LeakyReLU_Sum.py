import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 62_Matmul_GroupNorm_LeakyReLU_Sum (small sizes)."""

    def __init__(self, input_size, hidden_size, num_groups, eps=1e-05, negative_slope=0.01):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x):
        x = self.fc(x)
        x = self.gn(x)
        x = self.leaky_relu(x)
        x = x + x
        return x


batch_size = 2
input_size = 12
hidden_size = 32
num_groups = 4
width = 8


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
