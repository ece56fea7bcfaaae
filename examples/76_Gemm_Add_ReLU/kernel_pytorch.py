"""Reference for KernelBench level 2, problem 76: Gemm_Add_ReLU.

A bias-free linear layer, then a separately learned per-feature bias, then ReLU.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """y = relu(x @ W^T + bias), with the bias held outside the Linear."""

    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x + self.bias
        x = torch.relu(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
