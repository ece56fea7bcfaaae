"""Honest: LayerNorm, two-pass in column blocks, autotuned block size, wrapped in torch.autograd.Function,
packed-parameter cache keyed on _version, lru_cache'd launch helper."""
import functools
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})],
                 key=["N"])
@triton.jit
def _ln_kernel(x_ptr, wb_ptr, out_ptr, N, sxm, sxn, som, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < N
        acc += tl.load(x_ptr + row * sxm + offs * sxn, mask=m, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < N
        x = tl.load(x_ptr + row * sxm + offs * sxn, mask=m, other=0.0)
        d = tl.where(m, x - mean, 0.0)
        acc2 += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < N
        x = tl.load(x_ptr + row * sxm + offs * sxn, mask=m, other=0.0)
        w = tl.load(wb_ptr + offs, mask=m, other=0.0)
        b = tl.load(wb_ptr + N + offs, mask=m, other=0.0)
        tl.store(out_ptr + row * som + offs, (x - mean) * rstd * w + b, mask=m)


@functools.lru_cache(maxsize=64)
def _grid(m):
    return (m,)


class _LN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, wb, eps):
        M, N = x.shape
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _ln_kernel[_grid(M)](x, wb, out, N, x.stride(0), x.stride(1), out.stride(0), eps)
        return out


class Model(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=eps)
        self._key = None
        self._packed = None

    def packed(self):
        w, b = self.ln.weight, self.ln.bias
        key = (w.data_ptr(), w._version, b.data_ptr(), b._version)
        if key != self._key:
            self._packed = torch.cat([w.detach(), b.detach()])
            self._key = key
        return self._packed

    def forward(self, x):
        return _LN.apply(x, self.packed(), float(self.ln.eps))


def get_inputs():
    return [torch.randn(16, 96)]


def get_init_inputs():
    return [96, 1e-5]
