import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rows(x_ptr, b_ptr, o_ptr, R, M, N, sxb, sxm, sxn, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    rr = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rr[:, None] < R) & (rn[None, :] < N)
    bi = (rr // M).to(tl.int64)
    mi = (rr % M).to(tl.int64)
    x = tl.load(x_ptr + bi[:, None] * sxb + mi[:, None] * sxm + rn[None, :] * sxn, mask=mask, other=0.0)
    b = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    y = tl.where(x > 0, x, 0.0)
    y = tl.where(x != x, x, y) + b[None, :]
    tl.store(o_ptr + rr[:, None].to(tl.int64) * N + rn[None, :], y, mask=mask)


class ModelNew(nn.Module):
    """Honest: any 3-D strides, (b, m) recovered from the flattened row."""

    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        B, M, N = x.shape
        R = B * M
        out = torch.empty((B, M, N), dtype=x.dtype, device=x.device)
        _rows[(triton.cdiv(R, 8), triton.cdiv(N, 32))](x, self.bias, out, R, M, N, x.stride(0), x.stride(1),
                                                       x.stride(2), BLOCK_R=8, BLOCK_N=32)
        return out


b = 4
m = 6
n = 40


def get_inputs():
    return [torch.randn(b, m, n)]


def get_init_inputs():
    return [n]
