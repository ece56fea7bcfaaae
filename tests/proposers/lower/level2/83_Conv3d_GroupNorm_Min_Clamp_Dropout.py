import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 83_Conv3d_GroupNorm_Min_Clamp_Dropout (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.dropout = nn.Dropout(dropout_p)
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        x = torch.min(x, torch.tensor(self.min_value, device=x.device))
        x = torch.clamp(x, min=self.min_value, max=self.max_value)
        x = self.dropout(x)
        return x


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
groups = 4
min_value = 0.0
max_value = 1.0
dropout_p = 0.2
width = 8
height = 8
depth = 6


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p]
