import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 55_Matmul_MaxPool_Sum_Scale (small sizes)."""

    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        x = x * self.scale_factor
        return x


batch_size = 2
in_features = 12
out_features = 32
kernel_size = 2
scale_factor = 0.5
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, kernel_size, scale_factor]
