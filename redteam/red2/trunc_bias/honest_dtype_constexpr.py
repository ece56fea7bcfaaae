"""Honest: trunc(x*4)+bias in one elementwise kernel over a 2-D strided view (no copy), output dtype as a constexpr."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _trunc_bias(x_ptr, b_ptr, o_ptr, M, N, sxm, sxn, som, son, BM: tl.constexpr, BN: tl.constexpr,
                OUT_DTYPE: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=m, other=0.0).to(tl.float32)
    v = x * 4.0
    t = tl.where(v >= 0, tl.floor(v), tl.ceil(v))
    b = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    tl.store(o_ptr + rm[:, None] * som + rn[None, :] * son, (t + b[None, :]).to(OUT_DTYPE), mask=m)


_TL = {torch.float32: tl.float32, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16}


class Model(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N = x.shape
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))
        _trunc_bias[grid](x, self.bias, out, M, N, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                          BM=16, BN=32, OUT_DTYPE=_TL[x.dtype])
        return out


batch_size = 9
n = 40


def get_inputs():
    return [torch.randn(batch_size, n)]


def get_init_inputs():
    return [n]
