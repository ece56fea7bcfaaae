"""Honest: a small launcher class owns tile choice and launches; GEMM + bias + multiplier + LeakyReLU fused."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from dataclasses import dataclass


@triton.jit
def _fused(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk, mult, slope,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk, mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc = (acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]) * mult
    acc = tl.where(acc >= 0, acc, acc * slope)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@dataclass
class Tiles:
    bm: int = 32
    bn: int = 32
    bk: int = 32


class FusedLinearAct:
    def __init__(self, tiles):
        self.tiles = tiles

    def __call__(self, x, weight, bias, mult, slope):
        M, K = x.shape
        N = weight.shape[0]
        t = self.tiles
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _fused[(triton.cdiv(M, t.bm), triton.cdiv(N, t.bn))](
            x, weight, bias, out, M, N, K, x.stride(0), x.stride(1), weight.stride(0), weight.stride(1),
            float(mult), float(slope), BM=t.bm, BN=t.bn, BK=t.bk)
        return out


class Model(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        self.op = FusedLinearAct(Tiles())

    def forward(self, x):
        return self.op(x, self.gemm.weight, self.gemm.bias, self.multiplier, self.leaky_relu.negative_slope)


batch_size = 1024
in_features = 8192
out_features = 8192
multiplier = 2.0
negative_slope = 0.1


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]
