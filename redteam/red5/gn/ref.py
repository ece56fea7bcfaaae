import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_channels, num_groups, eps):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, eps=eps)

    def forward(self, x):
        return self.gn(x)


batch_size = 16
channels = 64


def get_inputs():
    return [torch.randn(batch_size, channels)]


def get_init_inputs():
    return [channels, 4, 1e-5]
