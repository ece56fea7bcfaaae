"""Honest: GEMM+bias+GELU kernel, then an online-softmax row kernel (running max and sum over column blocks)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_gelu(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk,
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
    acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _online_softmax(y_ptr, o_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * N
    m_run = tl.full((), float("-inf"), tl.float32)
    s_run = tl.zeros((), tl.float32)
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(y_ptr + base + cols, mask=cols < N, other=float("-inf"))
        m_new = tl.maximum(m_run, tl.max(v, axis=0))
        s_run = s_run * tl.exp(m_run - m_new) + tl.sum(tl.exp(v - m_new), axis=0)
        m_run = m_new
    for c0 in range(0, N, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        v = tl.load(y_ptr + base + cols, mask=cols < N, other=float("-inf"))
        tl.store(o_ptr + base + cols, tl.exp(v - m_run) / s_run, mask=cols < N)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _linear_gelu[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, w, self.linear.bias, y, M, N, K,
                                                                x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                                                BM=32, BN=32, BK=32)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _online_softmax[(M,)](y, out, N, BLOCK=64)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
