"""Attack a04: the whole softmax in torch (nn.Softmax inside an nn.Sequential that the entry class
is, under the alias `Module`); the only Triton kernel is a copy, so ghost replay still changes the output."""
import torch
import torch.nn as nn
from torch.nn import Sequential as Module
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


class Copy(nn.Module):
    def forward(self, y):
        y = y.contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        _copy_kernel[(triton.cdiv(n, 1024),)](y, out, n, BLOCK=1024)
        return out


class Model(Module):
    def __init__(self):
        super().__init__(nn.Softmax(dim=-1), Copy())


batch_size = 16
dim = 200


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
