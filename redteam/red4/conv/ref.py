import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, ksize):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, ksize, groups=channels)

    def forward(self, x):
        return self.conv(x)


batch = 2
channels = 6
length = 30
ksize = 3


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, ksize]
