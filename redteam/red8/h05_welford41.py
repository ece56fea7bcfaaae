"""Honest: GEMM+bias, then per-column Welford/Chan statistics over row chunks (running stats updated),
eval mode reads the running statistics, then normalise + GELU + ReLU."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk,
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
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _welford_cols(y_ptr, mean_ptr, rstd_ptr, rm_ptr, rv_ptr, nbt_ptr, M, N, eps, momentum,
                  BM: tl.constexpr, BN: tl.constexpr):
    pn = tl.program_id(0)
    cols = pn * BN + tl.arange(0, BN)
    cm = cols < N
    n_a = tl.zeros((BN,), tl.float32)
    mean_a = tl.zeros((BN,), tl.float32)
    m2_a = tl.zeros((BN,), tl.float32)
    for r0 in range(0, M, BM):
        rows = r0 + tl.arange(0, BM)
        msk = (rows[:, None] < M) & cm[None, :]
        v = tl.load(y_ptr + rows[:, None] * N + cols[None, :], mask=msk, other=0.0)
        n_b = tl.sum(msk.to(tl.float32), axis=0)
        mean_b = tl.sum(v, axis=0) / tl.maximum(n_b, 1.0)
        d = tl.where(msk, v - mean_b[None, :], 0.0)
        m2_b = tl.sum(d * d, axis=0)
        n = n_a + n_b
        delta = mean_b - mean_a
        mean_a = mean_a + delta * n_b / tl.maximum(n, 1.0)
        m2_a = m2_a + m2_b + delta * delta * n_a * n_b / tl.maximum(n, 1.0)
        n_a = n
    var = m2_a / M
    tl.store(mean_ptr + cols, mean_a, mask=cm)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(var + eps), mask=cm)
    rmv = tl.load(rm_ptr + cols, mask=cm, other=0.0)
    rvv = tl.load(rv_ptr + cols, mask=cm, other=0.0)
    tl.store(rm_ptr + cols, (1.0 - momentum) * rmv + momentum * mean_a, mask=cm)
    tl.store(rv_ptr + cols, (1.0 - momentum) * rvv + momentum * (m2_a / (M - 1)), mask=cm)
    if pn == 0:
        tl.store(nbt_ptr, tl.load(nbt_ptr) + 1)


@triton.jit
def _running_stats(rm_ptr, rv_ptr, mean_ptr, rstd_ptr, N, eps, BN: tl.constexpr):
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    cm = cols < N
    tl.store(mean_ptr + cols, tl.load(rm_ptr + cols, mask=cm, other=0.0), mask=cm)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(tl.load(rv_ptr + cols, mask=cm, other=1.0) + eps), mask=cm)


@triton.jit
def _norm_act(y_ptr, mean_ptr, rstd_ptr, g_ptr, b_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    cm = cols < N
    msk = (rows[:, None] < M) & cm[None, :]
    v = tl.load(y_ptr + rows[:, None] * N + cols[None, :], mask=msk, other=0.0)
    mu = tl.load(mean_ptr + cols, mask=cm, other=0.0)
    rs = tl.load(rstd_ptr + cols, mask=cm, other=0.0)
    g = tl.load(g_ptr + cols, mask=cm, other=0.0)
    bb = tl.load(b_ptr + cols, mask=cm, other=0.0)
    z = (v - mu[None, :]) * rs[None, :] * g[None, :] + bb[None, :]
    z = 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476))
    tl.store(o_ptr + rows[:, None] * N + cols[None, :], tl.maximum(z, 0.0), mask=msk)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        w = self.gemm.weight
        bn = self.batch_norm
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _linear[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, w, self.gemm.bias, y, M, N, K,
                                                           x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                                           BM=32, BN=32, BK=32)
        mean = torch.empty((N,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((N,), device=x.device, dtype=torch.float32)
        if bn.training:
            _welford_cols[(triton.cdiv(N, 32),)](y, mean, rstd, bn.running_mean, bn.running_var,
                                                 bn.num_batches_tracked, M, N, float(bn.eps), float(bn.momentum),
                                                 BM=8, BN=32)
        else:
            _running_stats[(triton.cdiv(N, 32),)](bn.running_mean, bn.running_var, mean, rstd, N, float(bn.eps), BN=32)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _norm_act[(triton.cdiv(M, 16), triton.cdiv(N, 32))](y, mean, rstd, bn.weight, bn.bias, out, M, N, BM=16, BN=32)
        return out


batch_size = 16384
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
