"""Honest: a torch.autograd.Function wrapper, a @triton.jit helper called from the kernel, empty_like output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu(x):
    return tl.where(x > 0, x, tl.where(x != x, x, 0.0))


@triton.jit
def _relu_bias_fwd(x_ptr, b_ptr, o_ptr, n_el, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_el
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=m, other=0.0)
    tl.store(o_ptr + offs, _relu(x) + b, mask=m)


class _ReluBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        x = x.contiguous()
        out = torch.empty_like(x)
        n_el = x.numel()
        _relu_bias_fwd[(triton.cdiv(n_el, 128),)](x, bias, out, n_el, x.shape[-1], BLOCK=128)
        return out

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("forward only")


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return _ReluBias.apply(x, self.bias)


batch = 16
n = 48


def get_inputs():
    return [torch.randn(batch, n)]


def get_init_inputs():
    return [n]
