import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A linear layer whose output is added to a residual stream: out = x @ W^T + b + residual.
    (KernelBench L2 #40's sizes, with the residual as a second input.)
    """

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, residual):
        """
        Args:
            x: (batch_size, in_features)
            residual: (batch_size, out_features)
        Returns:
            (batch_size, out_features)
        """
        return self.linear(x) + residual


batch_size = 16384
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.rand(batch_size, in_features), torch.rand(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features]
