import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 95_Matmul_Add_Swish_Tanh_GELU_Hardtanh (small sizes)."""

    def __init__(self, in_features, out_features, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x):
        x = self.matmul(x)
        x = x + self.add_value
        x = torch.sigmoid(x) * x
        x = torch.tanh(x)
        x = torch.nn.functional.gelu(x)
        x = torch.nn.functional.hardtanh(x, min_val=-1, max_val=1)
        return x


batch_size = 2
in_features = 12
out_features = 32
add_value_shape = (out_features,)
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, add_value_shape]
