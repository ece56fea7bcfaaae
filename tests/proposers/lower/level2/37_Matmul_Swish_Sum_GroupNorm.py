import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 37_Matmul_Swish_Sum_GroupNorm (small sizes)."""

    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        x = self.matmul(x)
        x = torch.sigmoid(x) * x
        x = x + self.bias
        x = self.group_norm(x)
        return x


batch_size = 2
in_features = 12
out_features = 32
num_groups = 4
bias_shape = (out_features,)
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]
