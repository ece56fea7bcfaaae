import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level 2, problem 92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp (small sizes)."""

    def __init__(self, in_channels, out_channels, kernel_size, groups, eps=1e-05):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(groups, out_channels, eps=eps)
        self.tanh = nn.Tanh()
        self.hard_swish = nn.Hardswish()

    def forward(self, x):
        x_conv = self.conv(x)
        x_norm = self.group_norm(x_conv)
        x_tanh = self.tanh(x_norm)
        x_hard_swish = self.hard_swish(x_tanh)
        x_res = x_conv + x_hard_swish
        x_logsumexp = torch.logsumexp(x_res, dim=1, keepdim=True)
        return x_logsumexp


batch_size = 2
in_channels = 3
out_channels = 8
kernel_size = 3
groups = 4
width = 8
height = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
