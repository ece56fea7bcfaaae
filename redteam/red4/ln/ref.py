import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.ln = nn.LayerNorm(n, eps=eps)

    def forward(self, x):
        return self.ln(x)


m = 16
n = 64
eps = 1e-5


def get_inputs():
    return [torch.randn(m, n)]


def get_init_inputs():
    return [n, eps]
