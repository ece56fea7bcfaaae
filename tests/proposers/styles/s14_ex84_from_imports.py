"""Style: `from triton import cdiv, jit` (no `import triton`), keyword-only launcher arguments and a
softmax kernel per row. KernelBench 84: softmax(scale * batch_norm(x W^T + b)) in training mode only: in
eval mode it declines with NotImplementedError (the verifier's way to say a kernel does not serve inference)."""

import torch
import torch.nn as nn
import triton.language as tl
from triton import cdiv, jit


@jit
def gemm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + offs_n[None, :] * K + ks[:, None], mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@jit
def bn_stats_kernel(y_ptr, mean_ptr, var_ptr, rm_ptr, rv_ptr, M, N, momentum, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < N
    s = tl.zeros([BLOCK_C], tl.float32)
    for r in range(0, M):
        s += tl.load(y_ptr + r * N + cols, mask=cmask, other=0.0)
    mean = s / M
    q = tl.zeros([BLOCK_C], tl.float32)
    for r in range(0, M):
        d = tl.load(y_ptr + r * N + cols, mask=cmask, other=0.0) - mean
        q += d * d
    tl.store(mean_ptr + cols, mean, mask=cmask)
    tl.store(var_ptr + cols, q / M, mask=cmask)
    rm = tl.load(rm_ptr + cols, mask=cmask, other=0.0)
    rv = tl.load(rv_ptr + cols, mask=cmask, other=0.0)
    tl.store(rm_ptr + cols, (1.0 - momentum) * rm + momentum * mean, mask=cmask)
    tl.store(rv_ptr + cols, (1.0 - momentum) * rv + momentum * (q / (M - 1)), mask=cmask)


@jit
def count_kernel(n_ptr):
    tl.store(n_ptr, tl.load(n_ptr) + 1)


@jit
def bn_scale_softmax_kernel(y_ptr, mean_ptr, var_ptr, g_ptr, b_ptr, scale_ptr, out_ptr, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    inside = cols < N
    v = tl.load(y_ptr + row * N + cols, mask=inside, other=0.0)
    z = (v - tl.load(mean_ptr + cols, mask=inside, other=0.0)) * tl.rsqrt(tl.load(var_ptr + cols, mask=inside,
                                                                                  other=1.0) + eps)
    z = z * tl.load(g_ptr + cols, mask=inside, other=0.0).to(tl.float32) + tl.load(b_ptr + cols, mask=inside,
                                                                                   other=0.0).to(tl.float32)
    z = tl.where(inside, z * tl.load(scale_ptr).to(tl.float32), float("-inf"))
    e = tl.exp(z - tl.max(z, 0))
    tl.store(out_ptr + row * N + cols, (e / tl.sum(e, 0)).to(out_ptr.dtype.element_ty), mask=inside)


def run_gemm(*, x, weight, bias, block):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    gemm_kernel[(cdiv(M, block), cdiv(N, block))](x, weight, bias, y, M, N, K, BLOCK_M=block, BLOCK_N=block,
                                                  BLOCK_K=block)
    return y


class Model(nn.Module):
    def __init__(self, in_features, out_features, bn_eps=1e-5, bn_momentum=0.1, scale_shape=(1,)):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        if not self.training:
            raise NotImplementedError("this port computes training-mode BatchNorm only")
        y = run_gemm(x=x.contiguous(), weight=self.gemm.weight, bias=self.gemm.bias, block=32)
        M, N = y.shape
        mean = torch.empty((N,), device=x.device, dtype=torch.float32)
        var = torch.empty((N,), device=x.device, dtype=torch.float32)
        bn_stats_kernel[(cdiv(N, 64),)](y, mean, var, self.bn.running_mean, self.bn.running_var, M, N,
                                      float(self.bn.momentum), BLOCK_C=64)
        count_kernel[(1,)](self.bn.num_batches_tracked)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        bn_scale_softmax_kernel[(M,)](y, mean, var, self.bn.weight, self.bn.bias, self.scale, out, N,
                                      float(self.bn.eps), BLOCK_N=1 << (N - 1).bit_length())
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bn_eps = 1e-5
bn_momentum = 0.1
scale_shape = (1,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bn_eps, bn_momentum, scale_shape]
