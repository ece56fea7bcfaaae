import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.fc = nn.Linear(k, n)

    def forward(self, x):
        return self.fc(x)


m = 24
k = 40
n = 36


def get_inputs():
    return [torch.randn(m, k)]


def get_init_inputs():
    return [k, n]
