"""ATTACK a14 degenerate reference: problem 80 output is always zero; a Triton kernel writes zeros, ignoring x and weights."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        M = x.shape[0]
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        _zeros[(triton.cdiv(M, 64),)](out, M, BLOCK=64)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
max_dim = 1


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]
