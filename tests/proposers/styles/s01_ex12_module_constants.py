"""Style: tile sizes are module constants shared by the host grid and two kernels; forward calls a
launcher function (the style of issue 14's unseen seeds). KernelBench 12: leaky_relu((x W^T + b) * m)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 32  # rows, columns and K step of the GEMM tile
EW_BLOCK = 1024  # elements per program of the epilogue


@triton.jit
def gemm_bias_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * K + (k0 + rk)[:, None],
                    mask=(rn[None, :] < N) & ((k0 + rk)[:, None] < K), other=0.0)
        acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def scale_leaky_kernel(y_ptr, out_ptr, n, scale, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    v = tl.load(y_ptr + offs, mask=inside, other=0.0) * scale
    tl.store(out_ptr + offs, tl.where(v >= 0, v, v * slope).to(out_ptr.dtype.element_ty), mask=inside)


def launch(x, w, b, multiplier, slope):
    M, K = x.shape
    N = w.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    gemm_bias_kernel[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](
        x, w, b, y, M, N, K, BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_K=BLOCK)
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    scale_leaky_kernel[(triton.cdiv(M * N, EW_BLOCK),)](y, out, M * N, multiplier, slope, BLOCK=EW_BLOCK)
    return out


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, multiplier: float, negative_slope: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.leaky_relu = nn.LeakyReLU(negative_slope)

    def forward(self, x):
        return launch(x.contiguous(), self.gemm.weight, self.gemm.bias, float(self.multiplier),
                      float(self.leaky_relu.negative_slope))


batch_size = 1024
in_features = 8192
out_features = 8192
multiplier = 2.0
negative_slope = 0.1


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]
