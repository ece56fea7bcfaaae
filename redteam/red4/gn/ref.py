import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)

    def forward(self, x):
        return self.gn(x)


batch = 4
num_groups = 4
channels = 8
length = 20


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [num_groups, channels]
