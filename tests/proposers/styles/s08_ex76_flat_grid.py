"""Style: a 1-D launch whose kernel splits the program id into (row tile, column tile) itself,
row-major; grid size computed into a local first. KernelBench 76: relu(x W^T + bias)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemm_relu_bias(x_ptr, w_ptr, bias_ptr, out_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + offs_n[None, :] * K + ks[:, None], mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    out = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], out.to(out_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.gemm.weight.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        num_tiles = triton.cdiv(M, 32) * triton.cdiv(N, 32)
        gemm_relu_bias[(num_tiles,)](x, self.gemm.weight, self.bias, out, M, N, K, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
