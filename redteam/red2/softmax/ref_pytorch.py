"""Row softmax (reference)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


batch_size = 10
n_cols = 200


def get_inputs():
    return [torch.randn(batch_size, n_cols)]


def get_init_inputs():
    return []
