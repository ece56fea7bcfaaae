"""The negation runs in torch, unaudited: x becomes the imaginary part of a complex view, conj() and
.imag are views (a conj bit, a neg bit), and copy_ (movement) materialises -x. Triton adds the bias."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_bias(x_ptr, b_ptr, o_ptr, n_el, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_el
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs % N, mask=m, other=0.0)
    tl.store(o_ptr + offs, x + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n))

    def forward(self, x):
        z = torch.view_as_complex(torch.stack([x, x], -1))
        negx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        negx.copy_(z.conj().imag)
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n_el = x.numel()
        _add_bias[(triton.cdiv(n_el, 128),)](negx, self.bias, out, n_el, x.shape[-1], BLOCK=128)
        return out


batch = 16
n = 48


def get_inputs():
    return [torch.randn(batch, n)]


def get_init_inputs():
    return [n]
