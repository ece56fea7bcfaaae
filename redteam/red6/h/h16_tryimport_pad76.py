"""HONEST (76): module-level optional import in try/except (libdevice's erf isn't needed here; the
pattern is what real kernel files do), typing annotations, K padded to a multiple of BK with F.pad
(data movement) so the K loop needs no mask, new_empty for the output."""
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:
    libdevice = None

BK_PAD = 32


@triton.jit
def _gemm_padded(x_ptr, w_ptr, b_ptr, o_ptr, M, N, KP, sxm, swn, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, KP, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None], mask=rn[None, :] < N, other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :], 0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _pad_k(t: torch.Tensor, kp: int) -> torch.Tensor:
    return F.pad(t, (0, kp - t.shape[1])).contiguous()


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor, scale: Optional[float] = None) -> torch.Tensor:
        w = self.gemm.weight
        M, K = x.shape
        N = w.shape[0]
        kp = triton.cdiv(K, BK_PAD) * BK_PAD
        xp, wp = _pad_k(x, kp), _pad_k(w, kp)
        out = x.new_empty((M, N))
        grid: Tuple[int, int] = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        _gemm_padded[grid](xp, wp, self.bias, out, M, N, kp, xp.stride(0), wp.stride(0), BM=32, BN=32, BK=BK_PAD)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
