import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish (small sizes)."""

    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.matmul(x)
        x = x * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = x * torch.nn.functional.mish(x)
        return x


batch_size = 2
input_size = 12
hidden_size = 32
scale_factor = 2.0
clamp_min = -10.0
clamp_max = 10.0
width = 8


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scale_factor, clamp_min, clamp_max]
