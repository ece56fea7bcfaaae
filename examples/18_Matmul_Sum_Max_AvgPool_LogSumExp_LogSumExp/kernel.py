"""Naive Triton port of KernelBench level 2, problem 18 (Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp).

A first port: a GEMM kernel with bias that writes the full [batch, out] matrix, then a row kernel
that sums it and applies max, mean and two logsumexps literally, each over a single element. The
chain is the row sum of x @ W^T + b, i.e. x @ colsum(W) + sum(b): the GEMM could be a GEMV.
Fixed 64x64x32 tiles, fp32 upcasts of both operands.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_bias_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr,  # x [M, K], w [N, K] (nn.Linear layout), b [N], out [M, N]
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    DOT_PRECISION: tl.constexpr,  # "ieee" for fp32 operands, "tf32" otherwise
):
    # out[m, n] = sum_k x[m, k] * w[n, k] + b[n]
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
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(
        out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
        acc.to(out_ptr.dtype.element_ty), mask=out_mask,
    )


@triton.jit
def _row_sum_chain_kernel(
    y_ptr, out_ptr, N, stride_ym, stride_om,
    BLOCK_N: tl.constexpr,
):
    # s = sum_n y[m, n]; max, mean and logsumexp over one element each: lse(s) = s + log(exp(s - s))
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        acc += tl.load(y_ptr + row * stride_ym + cols, mask=cols < N, other=0.0).to(tl.float32)
    s = tl.sum(acc, axis=0)
    s = tl.maximum(s, s)  # max over a dim of size 1
    s = s / 1.0  # mean over a dim of size 1
    s = s + tl.log(tl.exp(s - s))  # logsumexp over a dim of size 1
    s = s + tl.log(tl.exp(s - s))  # and once more
    tl.store(out_ptr + row * stride_om, s.to(out_ptr.dtype.element_ty))


class Model(nn.Module):
    """Same parameters as the reference; forward runs only Triton kernels."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight, bias = self.linear.weight, self.linear.bias
        M, K = x.shape
        N = weight.shape[0]
        precision = "ieee" if x.dtype == torch.float32 else "tf32"
        # fp32 intermediate: a row sum over N bf16-rounded values would exceed 1e-2
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        _linear_bias_kernel[grid](
            x, weight, bias, y, M, N, K,
            x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, DOT_PRECISION=precision,
        )
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        _row_sum_chain_kernel[(M,)](y, out, N, y.stride(0), out.stride(0), BLOCK_N=1024)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features]
