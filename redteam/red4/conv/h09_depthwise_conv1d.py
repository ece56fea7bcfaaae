"""Honest depthwise Conv1d (valid padding): one program per (batch, channel, output block), loop over taps."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _dwconv(x_ptr, w_ptr, b_ptr, o_ptr, C, L, LO, KS, sxb, sxc, sxl, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    pb = tl.program_id(1)
    bi = pid // C
    c = pid % C
    lo = pb * BLOCK + tl.arange(0, BLOCK)
    m = lo < LO
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    base = x_ptr + bi.to(tl.int64) * sxb + c * sxc
    for k in range(0, KS):
        w = tl.load(w_ptr + c * KS + k)
        acc += tl.load(base + (lo + k) * sxl, mask=m, other=0.0) * w
    acc += tl.load(b_ptr + c)
    tl.store(o_ptr + (bi.to(tl.int64) * C + c) * LO + lo, acc, mask=m)


class ModelNew(nn.Module):
    def __init__(self, channels, ksize):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, ksize, groups=channels)

    def forward(self, x):
        B, C, L = x.shape
        KS = self.conv.weight.shape[-1]
        LO = L - KS + 1
        w = self.conv.weight.contiguous()
        out = torch.empty((B, C, LO), dtype=x.dtype, device=x.device)
        _dwconv[(B * C, triton.cdiv(LO, 16))](x, w, self.conv.bias, out, C, L, LO, KS, x.stride(0), x.stride(1),
                                              x.stride(2), BLOCK=16)
        return out


batch = 2
channels = 6
length = 30
ksize = 3


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, ksize]
