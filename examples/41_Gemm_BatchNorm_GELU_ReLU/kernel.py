"""Naive Triton port of KernelBench level 2, problem 41 (Gemm_BatchNorm_GELU_ReLU).

A first port in three launches: a GEMM kernel with bias, a column-statistics kernel that reads the
whole [batch, out] matrix twice (mean, then biased variance), and an elementwise kernel for
normalise + exact GELU + ReLU. Training-mode BatchNorm uses the batch statistics; the statistics
kernel also updates the running mean/variance (momentum, unbiased variance) as torch does, and a
one-program kernel counts the batch. In eval mode the running statistics normalise instead. Fixed 64x64x32 tiles,
fp32 upcasts of both operands.
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
def _column_stats_kernel(
    y_ptr, mean_ptr, rstd_ptr, rm_ptr, rv_ptr, M, N, stride_ym, eps, momentum,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # mean[n] = sum_m y[m, n] / M; rstd[n] = 1 / sqrt(sum_m (y[m, n] - mean[n])^2 / M + eps)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        v = tl.load(y_ptr + rows[:, None] * stride_ym + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        total += tl.sum(v, axis=0)
    mean = total / M
    sq = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & col_mask[None, :]
        v = tl.load(y_ptr + rows[:, None] * stride_ym + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, v - mean[None, :], 0.0)
        sq += tl.sum(d * d, axis=0)
    tl.store(mean_ptr + cols, mean, mask=col_mask)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(sq / M + eps), mask=col_mask)
    rm = tl.load(rm_ptr + cols, mask=col_mask, other=0.0)
    rv = tl.load(rv_ptr + cols, mask=col_mask, other=0.0)
    tl.store(rm_ptr + cols, (1.0 - momentum) * rm + momentum * mean, mask=col_mask)
    tl.store(rv_ptr + cols, (1.0 - momentum) * rv + momentum * (sq / (M - 1)), mask=col_mask)


# num_batches_tracked += 1, as training-mode BatchNorm counts its calls
@triton.jit
def _count_batch_kernel(n_ptr):
    tl.store(n_ptr, tl.load(n_ptr) + 1)


# eval mode: normalise with the running statistics, as BatchNorm does for inference, and leave them be
@triton.jit
def _running_stats_kernel(rm_ptr, rv_ptr, mean_ptr, rstd_ptr, N, eps, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    m = cols < N
    tl.store(mean_ptr + cols, tl.load(rm_ptr + cols, mask=m, other=0.0).to(tl.float32), mask=m)
    rv = tl.load(rv_ptr + cols, mask=m, other=1.0).to(tl.float32)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(rv + eps), mask=m)


@triton.jit
def _bn_gelu_relu_kernel(
    y_ptr, mean_ptr, rstd_ptr, gamma_ptr, beta_ptr, out_ptr,
    M, N, stride_ym, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # z = (y - mean) * rstd * gamma + beta; out = max(0.5 * z * (1 + erf(z / sqrt(2))), 0)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    mask = (rows[:, None] < M) & col_mask[None, :]
    v = tl.load(y_ptr + rows[:, None] * stride_ym + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + cols, mask=col_mask, other=0.0)
    rstd = tl.load(rstd_ptr + cols, mask=col_mask, other=0.0)
    gamma = tl.load(gamma_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=col_mask, other=0.0).to(tl.float32)
    z = (v - mean[None, :]) * rstd[None, :] * gamma[None, :] + beta[None, :]
    g = 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476))
    g = tl.maximum(g, 0.0)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], g.to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    """Same parameters as the reference; forward runs only Triton kernels."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight, bias = self.gemm.weight, self.gemm.bias
        M, K = x.shape
        N = weight.shape[0]
        precision = "ieee" if x.dtype == torch.float32 else "tf32"
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        _linear_bias_kernel[grid](
            x, weight, bias, y, M, N, K,
            x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, DOT_PRECISION=precision,
        )
        mean = torch.empty((N,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((N,), device=x.device, dtype=torch.float32)
        if self.training:  # the batch's statistics, and the running ones updated
            _column_stats_kernel[(triton.cdiv(N, 64),)](
                y, mean, rstd, self.batch_norm.running_mean, self.batch_norm.running_var, M, N, y.stride(0),
                float(self.batch_norm.eps), float(self.batch_norm.momentum), BLOCK_M=64, BLOCK_N=64,
            )
            _count_batch_kernel[(1,)](self.batch_norm.num_batches_tracked)
        else:
            _running_stats_kernel[(triton.cdiv(N, 64),)](
                self.batch_norm.running_mean, self.batch_norm.running_var, mean, rstd, N,
                float(self.batch_norm.eps), BLOCK_N=64,
            )
        out = torch.empty_like(y)
        _bn_gelu_relu_kernel[grid](
            y, mean, rstd, self.batch_norm.weight, self.batch_norm.bias, out,
            M, N, y.stride(0), out.stride(0),
            BLOCK_M=64, BLOCK_N=64,
        )
        return out


batch_size = 16384
in_features = 4096
out_features = 4096


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features]
