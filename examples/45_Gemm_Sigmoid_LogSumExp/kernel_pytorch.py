"""KernelBench level 2, problem 45: Linear, Sigmoid, Linear, LogSumExp over features (reference)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """y[m] = logsumexp_n (sigmoid(x @ W1^T + b1) @ W2^T + b2)[m, n], a vector of length batch."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = self.linear2(x)
        x = torch.logsumexp(x, dim=1)
        return x


batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, input_size)]


def get_init_inputs() -> list:
    return [input_size, hidden_size, output_size]
