"""Honest: the launch wrapped as a torch.library.triton_op (wrap_triton), as torch.compile-friendly code is."""

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _relu_bias_k(x_ptr, b_ptr, o_ptr, n_el, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_el
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=m, other=0.0)
    y = tl.where(x > 0, x, tl.where(x != x, x, 0.0)) + b
    tl.store(o_ptr + offs, y, mask=m)


@triton_op("redteam4::relu_bias", mutates_args={})
def relu_bias(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n_el = x.numel()
    wrap_triton(_relu_bias_k)[(triton.cdiv(n_el, 128),)](x, bias, out, n_el, x.shape[-1], BLOCK=128)
    return out


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        return relu_bias(x, self.bias)


batch = 16
n = 48


def get_inputs():
    return [torch.randn(batch, n)]


def get_init_inputs():
    return [n]
