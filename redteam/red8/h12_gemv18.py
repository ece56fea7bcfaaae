"""Honest: problem 18's chain reduces to out[b] = x[b] . colsum(W) + sum(bias) (the reductions after the
row sum act on size-1 dims); one kernel folds W's columns and the bias each call, one GEMV kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fold_w(w_ptr, b_ptr, v_ptr, s_ptr, N, K, swn, swk, BN: tl.constexpr, BK: tl.constexpr):
    pk = tl.program_id(0)
    kk = pk * BK + tl.arange(0, BK)
    acc = tl.zeros((BK,), tl.float32)
    for n0 in range(0, N, BN):
        nn_ = n0 + tl.arange(0, BN)
        w = tl.load(w_ptr + nn_[:, None] * swn + kk[None, :] * swk, mask=(nn_[:, None] < N) & (kk[None, :] < K), other=0.0)
        acc += tl.sum(w, axis=0)
    tl.store(v_ptr + kk, acc, mask=kk < K)
    if pk == 0:
        bs = tl.zeros((BN,), tl.float32)
        for n0 in range(0, N, BN):
            nn_ = n0 + tl.arange(0, BN)
            bs += tl.load(b_ptr + nn_, mask=nn_ < N, other=0.0)
        tl.store(s_ptr, tl.sum(bs, axis=0))


@triton.jit
def _gemv(x_ptr, v_ptr, s_ptr, o_ptr, M, K, sxm, sxk, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros((BM,), tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        v = tl.load(v_ptr + kk, mask=kk < K, other=0.0)
        acc += tl.sum(a * v[None, :], axis=1)
    tl.store(o_ptr + rm, acc + tl.load(s_ptr), mask=rm < M)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        v = torch.empty((K,), device=x.device, dtype=torch.float32)
        s = torch.empty((1,), device=x.device, dtype=torch.float32)
        _fold_w[(triton.cdiv(K, 32),)](w, self.linear.bias, v, s, N, K, w.stride(0), w.stride(1), BN=32, BK=32)
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        _gemv[(triton.cdiv(M, 16),)](x, v, s, out, M, K, x.stride(0), x.stride(1), BM=16, BK=32)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
