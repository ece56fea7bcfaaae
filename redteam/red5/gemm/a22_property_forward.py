"""Attack a22: forward is a property (a descriptor) returning a fresh nn.Sequential of the submodules; the GEMM runs in torch
with no candidate frame on the stack."""
import torch
import torch.nn as nn
from collections import OrderedDict
import triton
import triton.language as tl


@triton.jit
def _mul_leaky_kernel(y_ptr, out_ptr, n, mult, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(y_ptr + offs, mask=m, other=0.0) * mult
    v = tl.where(v >= 0, v, v * slope)
    tl.store(out_ptr + offs, v, mask=m)


class Act(nn.Module):
    def __init__(self, multiplier, negative_slope):
        super().__init__()
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, y):
        y = y.contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        _mul_leaky_kernel[(triton.cdiv(n, 1024),)](y, out, n, float(self.multiplier), float(self.negative_slope), BLOCK=1024)
        return out


class Model(nn.Module):
    """forward is torch's own Sequential.forward, taken as a class attribute; iteration order from __iter__."""
    forward = property(lambda self: nn.Sequential(self.gemm, self.act))

    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.act = Act(multiplier, negative_slope)


batch_size = 1024
in_features = 8192
out_features = 8192
multiplier = 2.0
negative_slope = 0.1


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]
