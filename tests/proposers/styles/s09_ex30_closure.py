"""Style: forward defines a nested launcher (a closure over the tile sizes) and calls it; GroupNorm
runs one program per (row, group). KernelBench 30: hardtanh(group_norm(x W^T + b))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemm_bias(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
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
def group_norm_hardtanh(y_ptr, g_ptr, b_ptr, out_ptr, N, group_size, eps, lo, hi, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    group = tl.program_id(1)
    idx = tl.arange(0, BLOCK_C)
    inside = idx < group_size
    cols = group * group_size + idx
    v = tl.load(y_ptr + row * N + cols, mask=inside, other=0.0)
    mean = tl.sum(v, 0) / group_size
    d = tl.where(inside, v - mean, 0.0)
    var = tl.sum(d * d, 0) / group_size
    z = d * tl.rsqrt(var + eps) * tl.load(g_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    z = z + tl.load(b_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    z = tl.minimum(tl.maximum(z, lo), hi)
    tl.store(out_ptr + row * N + cols, z.to(out_ptr.dtype.element_ty), mask=inside)


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, num_groups: int, hardtanh_min: float,
                 hardtanh_max: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.gemm.weight.shape[0]
        bm, bn, bk = 32, 32, 32

        def run_gemm(out):
            gemm_bias[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
                x, self.gemm.weight, self.gemm.bias, out, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
            return out

        y = run_gemm(torch.empty((M, N), device=x.device, dtype=torch.float32))
        groups = self.group_norm.num_groups
        group_size = N // groups
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        group_norm_hardtanh[(M, groups)](
            y, self.group_norm.weight, self.group_norm.bias, out, N, group_size, float(self.group_norm.eps),
            float(self.hardtanh.min_val), float(self.hardtanh.max_val), BLOCK_C=triton.next_power_of_2(group_size))
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 16
hardtanh_min = -2.0
hardtanh_max = 2.0


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, hardtanh_min, hardtanh_max]
