import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU (small sizes)."""

    def __init__(self, in_features, out_features, negative_slope=0.01, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.negative_slope = negative_slope

    def forward(self, x):
        x = self.linear(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        x = torch.nn.functional.gelu(x)
        x = torch.nn.functional.gelu(x)
        return x


batch_size = 2
in_features = 12
out_features = 32
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
