"""Naive Triton port of KernelBench level 2, problem 14 (Gemm_Divide_Sum_Scaling).

A first port keeps the full [batch, hidden] GEMM result in memory and reduces it with a second
kernel, although the row sum of x @ W^T equals x @ (column sums of W): the whole GEMM could
collapse to a GEMV. Fixed 64x64x32 tiles, fp32 upcasts of both operands.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(
    x_ptr, w_ptr, out_ptr,  # x [M, K], w [N, K] (weight as stored), out [M, N]
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    DOT_PRECISION: tl.constexpr,  # "ieee" for fp32 operands, "tf32" otherwise
):
    # out[m, n] = sum_k x[m, k] * w[n, k]
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(
            x_ptr + offs_m[:, None] * stride_xm + ks[None, :] * stride_xk,
            mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0,
        ).to(tl.float32)
        b = tl.load(
            w_ptr + offs_n[None, :] * stride_wn + ks[:, None] * stride_wk,
            mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0,
        ).to(tl.float32)
        acc += tl.dot(a, b, input_precision=DOT_PRECISION)
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(
        out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
        acc.to(out_ptr.dtype.element_ty), mask=out_mask,
    )


@triton.jit
def _row_sum_scale_kernel(
    y_ptr, out_ptr, N, stride_ym, stride_om, scaling_factor,
    BLOCK_N: tl.constexpr,
):
    # out[m] = scaling_factor * sum_n (y[m, n] / 2)
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        v = tl.load(y_ptr + row * stride_ym + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += v / 2
    total = tl.sum(acc, axis=0) * scaling_factor
    tl.store(out_ptr + row * stride_om, total.to(out_ptr.dtype.element_ty))


class Model(nn.Module):
    """Same parameters as the reference; forward runs only Triton kernels."""

    def __init__(self, input_size: int, hidden_size: int, scaling_factor: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight = self.weight
        M, K = x.shape
        N = weight.shape[0]
        precision = "ieee" if x.dtype == torch.float32 else "tf32"
        # fp32 intermediate: a row sum over N bf16-rounded values would exceed 1e-2
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        _matmul_kernel[grid](
            x, weight, y, M, N, K,
            x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, DOT_PRECISION=precision,
        )
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        _row_sum_scale_kernel[(M,)](
            y, out, N, y.stride(0), out.stride(0), float(self.scaling_factor),
            BLOCK_N=1024,
        )
        return out


batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 1.5


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, input_size)]


def get_init_inputs() -> list:
    return [input_size, hidden_size, scaling_factor]
