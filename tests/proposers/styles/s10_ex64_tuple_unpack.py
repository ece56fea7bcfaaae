"""Style: tiles bound by tuple unpacking (`BM, BN, BK = 32, 32, 32`) and a logsumexp row kernel
that walks the row in chunks. KernelBench 64: gelu(gelu(leaky(leaky(logsumexp(x W^T + b)))))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_bias_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(w_ptr + rn[None, :] * K + (k0 + rk)[:, None], mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K),
                    other=0.0)
        acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _gelu(v):
    return 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))


@triton.jit
def lse_chain_kernel(y_ptr, out_ptr, N, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    run_max = tl.full([CHUNK], float("-inf"), tl.float32)
    for c0 in range(0, N, CHUNK):
        cols = c0 + tl.arange(0, CHUNK)
        run_max = tl.maximum(run_max, tl.load(y_ptr + row * N + cols, mask=cols < N, other=float("-inf")))
    m = tl.max(run_max, 0)
    total = tl.zeros([CHUNK], tl.float32)
    for c0 in range(0, N, CHUNK):
        cols = c0 + tl.arange(0, CHUNK)
        v = tl.load(y_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
        total += tl.exp(v - m)
    v = m + tl.log(tl.sum(total, 0))
    v = tl.where(v >= 0, v, v * 0.01)
    v = tl.where(v >= 0, v, v * 0.01)
    v = _gelu(_gelu(v))
    tl.store(out_ptr + row, v.to(out_ptr.dtype.element_ty))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        BM, BN, BK = 32, 32, 32
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        matmul_bias_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, self.linear.weight, self.linear.bias, y,
                                                                     M, N, K, BM=BM, BN=BN, BK=BK)
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        lse_chain_kernel[(M,)](y, out, N, CHUNK=256)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
