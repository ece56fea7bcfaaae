import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 66_Matmul_Dropout_Softmax (small sizes)."""

    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)
        x = torch.softmax(x, dim=1)
        return x


batch_size = 2
in_features = 12
out_features = 32
dropout_p = 0.2
width = 8


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
