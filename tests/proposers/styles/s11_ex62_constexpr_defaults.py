"""Style: tile sizes are defaults of the kernels' constexpr parameters and never passed at the
launch. KernelBench 62: 2 * leaky_relu(group_norm(x W^T + b))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fc_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr = 32, BLOCK_N: tl.constexpr = 32,
              BLOCK_K: tl.constexpr = 32):
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
def gn_leaky_double_kernel(y_ptr, g_ptr, b_ptr, out_ptr, N, group_size, eps, slope, BLOCK_C: tl.constexpr = 1024):
    row = tl.program_id(0)
    group = tl.program_id(1)
    idx = tl.arange(0, BLOCK_C)
    inside = idx < group_size
    cols = group * group_size + idx
    v = tl.load(y_ptr + row * N + cols, mask=inside, other=0.0)
    mean = tl.sum(v, 0) / group_size
    d = tl.where(inside, v - mean, 0.0)
    z = d * tl.rsqrt(tl.sum(d * d, 0) / group_size + eps)
    z = z * tl.load(g_ptr + cols, mask=inside, other=0.0).to(tl.float32) + tl.load(b_ptr + cols, mask=inside,
                                                                                   other=0.0).to(tl.float32)
    z = tl.where(z >= 0, z, z * slope)
    tl.store(out_ptr + row * N + cols, (z + z).to(out_ptr.dtype.element_ty), mask=inside)


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5, negative_slope=0.01):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.fc.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        fc_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, self.fc.weight, self.fc.bias, y, M, N, K)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        groups = self.gn.num_groups
        gn_leaky_double_kernel[(M, groups)](y, self.gn.weight, self.gn.bias, out, N, N // groups, float(self.gn.eps),
                                            float(self.leaky_relu.negative_slope))
        return out


batch_size = 1024
input_size = 8192
hidden_size = 8192
num_groups = 512


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
