import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 84_Gemm_BatchNorm_Scaling_Softmax (small sizes)."""

    def __init__(self, in_features, out_features, bn_eps, bn_momentum, scale_shape, eps=1e-05, momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.gemm(x)
        x = self.bn(x)
        x = self.scale * x
        x = self.softmax(x)
        return x


batch_size = 2
in_features = 12
out_features = 32
bn_eps = 1e-05
bn_momentum = 0.1
scale_shape = (1,)
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bn_eps, bn_momentum, scale_shape]
