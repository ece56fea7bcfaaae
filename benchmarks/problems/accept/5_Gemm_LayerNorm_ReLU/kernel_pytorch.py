import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear layer followed by LayerNorm over the output features and a ReLU.
    """

    def __init__(self, in_features, out_features, eps=1e-5):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features, eps=eps)

    def forward(self, x):
        x = self.linear(x)
        x = self.norm(x)
        return torch.relu(x)


batch_size = 1024
in_features = 8192
out_features = 8192
eps = 1e-5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, eps]
