"""Style: tile sizes are class attributes read through `self`; the row kernel holds a whole row
(BLOCK_N computed from N). KernelBench 99: softmax(gelu(x W^T + b), dim=1)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fc_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0).to(tl.float32)
        w = tl.load(w_ptr + rn[None, :] * K + (k0 + rk)[:, None],
                    mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K), other=0.0).to(tl.float32)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def gelu_softmax_kernel(y_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    inside = cols < N
    v = tl.load(y_ptr + row * N + cols, mask=inside, other=0.0)
    v = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    v = tl.where(inside, v, float("-inf"))
    e = tl.exp(v - tl.max(v, 0))
    tl.store(out_ptr + row * N + cols, (e / tl.sum(e, 0)).to(out_ptr.dtype.element_ty), mask=inside)


class Model(nn.Module):
    tile_m = 32
    tile_n = 32
    tile_k = 32

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        fc_kernel[(triton.cdiv(M, self.tile_m), triton.cdiv(N, self.tile_n))](
            x, self.linear.weight, self.linear.bias, y, M, N, K,
            BLOCK_M=self.tile_m, BLOCK_N=self.tile_n, BLOCK_K=self.tile_k)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        gelu_softmax_kernel[(M,)](y, out, N, BLOCK_N=triton.next_power_of_2(N))
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
