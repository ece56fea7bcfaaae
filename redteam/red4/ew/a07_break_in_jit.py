import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def _relu_bias_rows(x_ptr, b_ptr, o_ptr, M, N, sxm, sxn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, 1 << 20, BLOCK_N):
        if start >= N:
            break
        rn = start + tl.arange(0, BLOCK_N)
        m = rn < N
        x = tl.load(x_ptr + row * sxm + rn * sxn, mask=m, other=0.0)
        b = tl.load(b_ptr + rn, mask=m, other=0.0)
        y = tl.where(x > 0, x, 0.0)
        y = tl.where(x != x, x, y) + b
        tl.store(o_ptr + row * N + rn, y, mask=m)


class ModelNew(nn.Module):
    """A row loop with `break`: Triton's compiler refuses `break` (unsupported AST node); the interpreter runs it."""

    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        _relu_bias_rows[(M,)](x, self.bias, out, M, N, x.stride(0), x.stride(1), BLOCK_N=32)
        return out


batch = 16
n = 48


def get_inputs():
    return [torch.randn(batch, n)]


def get_init_inputs():
    return [n]
