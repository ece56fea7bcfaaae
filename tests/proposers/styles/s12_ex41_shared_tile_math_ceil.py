"""Style: one TILE constant shared by three kernels (GEMM, column statistics, normalise), grids
written with math.ceil. KernelBench 41: relu(gelu(batch_norm(x W^T + b))), batch statistics in training
mode and running ones in eval mode."""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

TILE = 32


@triton.jit
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


@triton.jit
def column_stats_kernel(y_ptr, mean_ptr, rstd_ptr, rm_ptr, rv_ptr, M, N, eps, momentum, BLOCK_R: tl.constexpr,
                        BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < N
    total = tl.zeros([BLOCK_C], tl.float32)
    for r0 in range(0, M, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        total += tl.sum(tl.load(y_ptr + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < M) & cmask[None, :],
                                other=0.0), 0)
    mean = total / M
    sq = tl.zeros([BLOCK_C], tl.float32)
    for r0 in range(0, M, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        inside = (rows[:, None] < M) & cmask[None, :]
        d = tl.where(inside, tl.load(y_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0) - mean[None, :], 0.0)
        sq += tl.sum(d * d, 0)
    tl.store(mean_ptr + cols, mean, mask=cmask)
    tl.store(rstd_ptr + cols, tl.rsqrt(sq / M + eps), mask=cmask)
    rm = tl.load(rm_ptr + cols, mask=cmask, other=0.0)
    rv = tl.load(rv_ptr + cols, mask=cmask, other=0.0)
    tl.store(rm_ptr + cols, (1.0 - momentum) * rm + momentum * mean, mask=cmask)
    tl.store(rv_ptr + cols, (1.0 - momentum) * rv + momentum * (sq / (M - 1)), mask=cmask)


@triton.jit
def count_kernel(n_ptr):
    tl.store(n_ptr, tl.load(n_ptr) + 1)


@triton.jit
def running_stats_kernel(rm_ptr, rv_ptr, mean_ptr, rstd_ptr, N, eps, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < N
    tl.store(mean_ptr + cols, tl.load(rm_ptr + cols, mask=cmask, other=0.0), mask=cmask)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(tl.load(rv_ptr + cols, mask=cmask, other=1.0) + eps), mask=cmask)


@triton.jit
def normalize_kernel(y_ptr, mean_ptr, rstd_ptr, g_ptr, b_ptr, out_ptr, M, N, BLOCK_R: tl.constexpr,
                     BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < N
    inside = (rows[:, None] < M) & cmask[None, :]
    v = tl.load(y_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0)
    mean = tl.load(mean_ptr + cols, mask=cmask, other=0.0)
    rstd = tl.load(rstd_ptr + cols, mask=cmask, other=0.0)
    z = (v - mean[None, :]) * rstd[None, :] * tl.load(g_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    z = z + tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    z = 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476))
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tl.maximum(z, 0.0).to(out_ptr.dtype.element_ty), mask=inside)


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.gemm.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        gemm_kernel[(math.ceil(M / TILE), math.ceil(N / TILE))](x, self.gemm.weight, self.gemm.bias, y, M, N, K,
                                                                BLOCK_M=TILE, BLOCK_N=TILE, BLOCK_K=TILE)
        mean = torch.empty((N,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((N,), device=x.device, dtype=torch.float32)
        if self.training:
            column_stats_kernel[(math.ceil(N / TILE),)](y, mean, rstd, self.batch_norm.running_mean,
                                                       self.batch_norm.running_var, M, N, float(self.batch_norm.eps),
                                                       float(self.batch_norm.momentum), BLOCK_R=TILE, BLOCK_C=TILE)
            count_kernel[(1,)](self.batch_norm.num_batches_tracked)
        else:
            running_stats_kernel[(math.ceil(N / TILE),)](self.batch_norm.running_mean, self.batch_norm.running_var,
                                                        mean, rstd, N, float(self.batch_norm.eps), BLOCK_C=TILE)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        normalize_kernel[(math.ceil(M / TILE), math.ceil(N / TILE))](
            y, mean, rstd, self.batch_norm.weight, self.batch_norm.bias, out, M, N, BLOCK_R=TILE, BLOCK_C=TILE)
        return out


batch_size = 16384
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
