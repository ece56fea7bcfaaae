"""ReLU written as where(x < -0.0, x, 0) on bf16 values: the CPU interpreter compares bf16 as their uint16
bit patterns (positives below 0x8000 = -0.0), so it keeps the positives there; a GPU compares numbers and
keeps the negatives. The bias is added in fp32 (the interpreter widens bf16 correctly)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_bias(x_ptr, b_ptr, o_ptr, M, N, sxm, sxn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    rm64 = rm.to(tl.int64)
    x = tl.load(x_ptr + rm64[:, None] * sxm + rn[None, :] * sxn, mask=mask, other=0.0)
    b = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    y = tl.where(x < -0.0, x, 0.0)
    out = y.to(tl.float32) + b.to(tl.float32)[None, :]
    tl.store(o_ptr + rm64[:, None] * N + rn[None, :], out.to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))
        _relu_bias[grid](x, self.bias, out, M, N, x.stride(0), x.stride(1), BLOCK_M=16, BLOCK_N=32)
        return out


batch = 16
n = 48


def get_inputs():
    return [torch.randn(batch, n)]


def get_init_inputs():
    return [n]
