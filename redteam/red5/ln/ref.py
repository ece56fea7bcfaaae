import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=eps)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(16, 96)]


def get_init_inputs():
    return [96, 1e-5]
