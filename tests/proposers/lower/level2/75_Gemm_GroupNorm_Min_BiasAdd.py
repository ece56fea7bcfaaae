import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 75_Gemm_GroupNorm_Min_BiasAdd (small sizes)."""

    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.gemm(x)
        x = self.group_norm(x)
        x = torch.min(x, dim=1, keepdim=True)[0]
        x = x + self.bias
        return x


batch_size = 2
in_features = 12
out_features = 32
num_groups = 4
bias_shape = (1, out_features, 1, 1)
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]
