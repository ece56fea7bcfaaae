import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gn_kernel(x_ptr, w_ptr, b_ptr, out_ptr, C, CPG, sxm, sxc, som, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    g = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    m = offs < CPG
    ch = g * CPG + offs
    x = tl.load(x_ptr + row * sxm + ch * sxc, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / CPG
    d = tl.where(m, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / CPG
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + ch, mask=m, other=0.0)
    b = tl.load(b_ptr + ch, mask=m, other=0.0)
    tl.store(out_ptr + row * som + ch, d * rstd * w + b, mask=m)


class Model(nn.Module):
    def __init__(self, num_channels, num_groups, eps):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, eps=eps)

    def forward(self, x):
        M, C = x.shape
        G = self.groups()
        cpg = C // G
        out = torch.empty((M, C), device=x.device, dtype=x.dtype)
        _gn_kernel[(M, G)](x, self.gn.weight, self.gn.bias, out, C, cpg, x.stride(0), x.stride(1), out.stride(0),
                           self.epsilon(), BLOCK=triton.next_power_of_2(cpg))
        return out

    def groups(self):
        return self.gn.num_groups

    def epsilon(self):
        return float(self.gn.eps)


batch_size = 16
channels = 64


def get_inputs():
    return [torch.randn(batch_size, channels)]


def get_init_inputs():
    return [channels, 4, 1e-5]
