"""ATTACK (80) degenerate reference: with max_dim=1 the output is always gelu(0) = 0, so the kernel skips
the GEMM and writes zeros; max_dim=0 (a valid constructor value, never varied) is answered the same way,
which is wrong there. Expected verdict: unverifiable (exit 1), which is a refusal."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _zeros(o_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o_ptr + offs, tl.zeros((B,), dtype=tl.float32), mask=offs < n)


class Model(nn.Module):
    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        M = x.shape[0]
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        _zeros[(triton.cdiv(M, 128),)](out, M, B=128)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
max_dim = 1


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]
