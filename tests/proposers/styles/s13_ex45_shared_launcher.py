"""Style: one launcher serves both GEMMs (an activation flag as a constexpr), a tile-size tuple as
a module constant, and a two-pass logsumexp kernel. KernelBench 45: lse(sigmoid(x W1^T + b1) W2^T + b2)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TILES = (32, 32, 32)


@triton.jit
def linear_act_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, SIGMOID: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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
    if SIGMOID:
        acc = tl.sigmoid(acc)
    tl.store(y_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def logsumexp_kernel(y_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(y_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
    m = tl.max(v, 0)
    tl.store(out_ptr + row, (m + tl.log(tl.sum(tl.exp(v - m), 0))).to(out_ptr.dtype.element_ty))


def linear(x, layer, sigmoid, out_dtype):
    M, K = x.shape
    N = layer.weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=out_dtype)
    bm, bn, bk = TILES
    linear_act_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](x, layer.weight, layer.bias, y, M, N, K,
                                                                SIGMOID=sigmoid, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return y


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        h = linear(x.contiguous(), self.linear1, True, x.dtype)
        y = linear(h, self.linear2, False, torch.float32)
        out = torch.empty((y.shape[0],), device=x.device, dtype=x.dtype)
        logsumexp_kernel[(y.shape[0],)](y, out, y.shape[1], BLOCK=triton.next_power_of_2(y.shape[1]))
        return out


batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
