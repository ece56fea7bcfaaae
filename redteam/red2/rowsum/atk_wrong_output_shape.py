"""Attack/bug: returns the row sums with shape (1, M) instead of (M,) (broadcasts against the right values; wrong for any caller that indexes or stacks it)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _partial(x_ptr, s_ptr, p_ptr, N, sxm, sxn, CHUNKS, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * sxm + cols * sxn, mask=m, other=0.0)
    s = tl.load(s_ptr + cols, mask=m, other=0.0)
    tl.store(p_ptr + row * CHUNKS + chunk, tl.sum(x * s, axis=0))


@triton.jit
def _finish(p_ptr, o_ptr, CHUNKS, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, CHUNKS, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        acc += tl.load(p_ptr + row * CHUNKS + c, mask=c < CHUNKS, other=0.0)
    tl.store(o_ptr + row, tl.sum(acc, axis=0))


class Model(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N = x.shape
        block = 64
        chunks = triton.cdiv(N, block)
        part = torch.empty((M, chunks), device=x.device, dtype=torch.float32)
        _partial[(M, chunks)](x, self.scale, part, N, x.stride(0), x.stride(1), chunks, BLOCK=block)
        out = torch.empty((M,), device=x.device, dtype=x.dtype)
        _finish[(M,)](part, out, chunks, BLOCK=16)
        return out.view(1, M)


batch_size = 11
n = 150


def get_inputs():
    return [torch.randn(batch_size, n)]


def get_init_inputs():
    return [n]
