"""Style: grids come from a helper function and tiles are local variables of forward; one Mish
kernel launched twice. KernelBench 29: mish(mish(x W^T + b))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def grid_2d(m, n, bm, bn):
    """One program per (bm x bn) output tile."""
    return (triton.cdiv(m, bm), triton.cdiv(n, bn))


def grid_1d(n, block):
    return (triton.cdiv(n, block),)


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, stride_x, stride_w, stride_y,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * stride_x + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_n[None, :] * stride_w + ks[:, None],
                    mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0).to(tl.float32)
        acc += tl.dot(a, w, input_precision="ieee")
    acc = acc + tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_y + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def mish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    v = tl.load(x_ptr + offs, mask=inside, other=0.0).to(tl.float32)
    sp = tl.where(v > 20.0, v, tl.log(1.0 + tl.exp(tl.minimum(v, 20.0))))
    y = v * (2.0 * tl.sigmoid(2.0 * sp) - 1.0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=inside)


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        tile_m, tile_n, tile_k = 32, 32, 32
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        linear_kernel[grid_2d(M, N, tile_m, tile_n)](
            x, self.linear.weight, self.linear.bias, y, M, N, K, x.stride(0), self.linear.weight.stride(0),
            y.stride(0), BLOCK_M=tile_m, BLOCK_N=tile_n, BLOCK_K=tile_k)
        once = torch.empty_like(y)
        twice = torch.empty((M, N), device=x.device, dtype=x.dtype)
        block = 512
        mish_kernel[grid_1d(M * N, block)](y, once, M * N, BLOCK=block)
        mish_kernel[grid_1d(M * N, block)](once, twice, M * N, BLOCK=block)
        return twice


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
