import torch
import torch.nn as nn


class Model(nn.Module):
    """codes -> low byte of each code, as a float scaled by 0.5"""

    def __init__(self):
        super().__init__()

    def forward(self, codes):
        return torch.bitwise_and(codes, 255).to(torch.float32) * 0.5


def get_inputs():
    return [torch.randint(0, 4000, (16, 600))]


def get_init_inputs():
    return []
