"""Style: launch settings kept in a dict and splatted into the launch (`**config`); the epilogue
kernel reads its block size from the same dict. KernelBench 95."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

GEMM_CONFIG = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}


@triton.jit
def gemm_kernel(x_ptr, w_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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
    tl.store(y_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def epilogue_kernel(y_ptr, b_ptr, a_ptr, out_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    col = offs % N
    v = tl.load(y_ptr + offs, mask=inside, other=0.0) + tl.load(b_ptr + col, mask=inside, other=0.0).to(tl.float32)
    v = v + tl.load(a_ptr + col, mask=inside, other=0.0).to(tl.float32)
    v = tl.sigmoid(v) * v
    v = 2.0 * tl.sigmoid(2.0 * v) - 1.0
    v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    tl.store(out_ptr + offs, v.to(out_ptr.dtype.element_ty), mask=inside)


class Model(nn.Module):
    def __init__(self, in_features, out_features, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.matmul.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        grid = (triton.cdiv(M, GEMM_CONFIG["BLOCK_M"]), triton.cdiv(N, GEMM_CONFIG["BLOCK_N"]))
        gemm_kernel[grid](x, self.matmul.weight, y, M, N, K, **GEMM_CONFIG)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        epilogue_kernel[(triton.cdiv(M * N, 1024),)](y, self.matmul.bias, self.add_value, out, M * N, N, BLOCK=1024)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
add_value_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, add_value_shape]
