"""Style: a module-level launcher whose tile sizes are function arguments with defaults, grid built
inside it; the epilogue kernel is 2-D. KernelBench 76: relu(x W^T + bias)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbn, sbk, scm, scn,
        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    i = tl.program_id(axis=0)
    j = tl.program_id(axis=1)
    offs_m = i * BM + tl.arange(0, BM)
    offs_n = j * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * sam + kk[None, :] * sak,
                    mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0).to(tl.float32)
        b = tl.load(b_ptr + kk[:, None] * sbk + offs_n[None, :] * sbn,
                    mask=(kk[:, None] < K) & (offs_n[None, :] < N), other=0.0).to(tl.float32)
        acc = acc + tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + offs_m[:, None] * scm + offs_n[None, :] * scn, acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def _bias_relu(y_ptr, bias_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    i = tl.program_id(0)
    j = tl.program_id(1)
    rows = i * BM + tl.arange(0, BM)
    cols = j * BN + tl.arange(0, BN)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    y = tl.load(y_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0)
    y = tl.maximum(y + tl.load(bias_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :], 0.0)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=inside)


def matmul_nt(a, b, block_m=32, block_n=32, block_k=32):
    """a @ b^T in fp32, b in nn.Linear layout [N, K]."""
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    _mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
              BM=block_m, BN=block_n, BK=block_k)
    return c


def bias_relu(y, bias, dtype, block_m=16, block_n=64):
    M, N = y.shape
    out = torch.empty((M, N), device=y.device, dtype=dtype)
    _bias_relu[(triton.cdiv(M, block_m), triton.cdiv(N, block_n))](y, bias, out, M, N, BM=block_m, BN=block_n)
    return out


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return bias_relu(matmul_nt(x, self.gemm.weight), self.bias, x.dtype)


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
