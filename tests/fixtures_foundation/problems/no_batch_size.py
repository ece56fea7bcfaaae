"""A problem whose get_inputs() has its sizes inline: no `batch_size` to rescale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(6, 4)]


def get_init_inputs():
    return []
