"""HONEST (76): unusual but legitimate host code: a dataclass for tile configs, itertools.product to
enumerate candidates, a functools.lru_cache'd chooser keyed on (M, N, K), a set of seen shapes, math
for ceil-div, and the GEMM split into two launches over the N range (low/high halves of the tiles)."""
import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn as nn
import triton
import triton.language as tl


@dataclass(frozen=True)
class Tile:
    bm: int
    bn: int
    bk: int


CANDIDATES = [Tile(bm, bn, bk) for bm, bn, bk in itertools.product((16, 32), (16, 32), (16, 32))]


@lru_cache(maxsize=64)
def choose(M: int, N: int, K: int) -> Tile:
    # least padded work, ties broken by the largest tile
    def waste(t: Tile) -> tuple:
        return (math.ceil(M / t.bm) * t.bm * math.ceil(N / t.bn) * t.bn * math.ceil(K / t.bk) * t.bk,
                -(t.bm * t.bn))
    return min(CANDIDATES, key=waste)


@triton.jit
def _gemm(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, n_lo, sxm, sxk, swn, swk, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = n_lo + pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=(rn[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :], 0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.seen = set()

    def forward(self, x):
        w = self.gemm.weight
        M, K = x.shape
        N = w.shape[0]
        self.seen.add((M, N, K))
        t = choose(M, N, K)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        n_tiles = math.ceil(N / t.bn)
        split = {"lo": (0, n_tiles // 2), "hi": (n_tiles // 2, n_tiles - n_tiles // 2)}
        for first, count in split.values():
            if count == 0:
                continue
            _gemm[(math.ceil(M / t.bm), count)](x, w, self.bias, out, M, N, K, first * t.bn, x.stride(0), x.stride(1),
                                               w.stride(0), w.stride(1), BM=t.bm, BN=t.bn, BK=t.bk)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
