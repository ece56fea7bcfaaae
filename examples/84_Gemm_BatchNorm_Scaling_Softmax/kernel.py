"""Naive Triton port of KernelBench level 2, problem 84: Gemm_BatchNorm_Scaling_Softmax.

A first, straightforward port in three launches: a GEMM(+bias) kernel writes the fp32 [M, N]
intermediate to global memory; a column kernel computes each feature's batch mean and biased
variance (training-mode BatchNorm, two passes over the batch); a row kernel normalises, applies the
BatchNorm affine, the scale and the softmax (one program per row, the whole row in one block).
Operands are upcast to fp32 before tl.dot and the tiles are small fixed literals. The column kernel
also updates the BatchNorm running statistics (momentum, unbiased variance) as torch does in training
mode, and a one-program kernel counts the batch. In eval mode the running statistics normalise instead.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


# out[m, n] = sum_k x[m, k] * w[n, k] + b[n]   (nn.Linear: x @ W^T + b, W kept in its [out, in] layout)
@triton.jit
def _linear_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_om, stride_on,
    HAS_BIAS: tl.constexpr,
    DOT_PRECISION: tl.constexpr,  # "ieee" for fp32 operands, "tf32" for upcast 16-bit ones
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
                    mask=(offs_m[:, None] < M) & (k[None, :] < K), other=0.0).to(tl.float32)
        b = tl.load(w_ptr + k[:, None] * stride_wk + offs_n[None, :] * stride_wn,
                    mask=(k[:, None] < K) & (offs_n[None, :] < N), other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision=DOT_PRECISION)
    if HAS_BIAS:
        bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
        acc += bias[None, :]
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             acc.to(out_ptr.dtype.element_ty), mask=out_mask)


# per feature n over the M batch rows: mean[n] = sum_m y[m, n] / M,
# rstd[n] = 1 / sqrt(sum_m (y[m, n] - mean[n])^2 / M + eps)   (biased variance, as BatchNorm uses)
@triton.jit
def _batch_stats_kernel(
    y_ptr, mean_ptr, rstd_ptr, rm_ptr, rv_ptr,
    M, N,
    stride_ym, stride_yn,
    eps, momentum,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    offs_m = tl.arange(0, BLOCK_M)
    total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        m = m0 + offs_m
        mask = (m[:, None] < M) & mask_n[None, :]
        total += tl.load(y_ptr + m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
                         mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / M
    sq = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        m = m0 + offs_m
        mask = (m[:, None] < M) & mask_n[None, :]
        y = tl.load(y_ptr + m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
                    mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, y - mean[None, :], 0.0)
        sq += d * d
    var = tl.sum(sq, axis=0) / M
    tl.store(mean_ptr + offs_n, mean, mask=mask_n)
    tl.store(rstd_ptr + offs_n, 1.0 / tl.sqrt(var + eps), mask=mask_n)
    rm = tl.load(rm_ptr + offs_n, mask=mask_n, other=0.0)
    rv = tl.load(rv_ptr + offs_n, mask=mask_n, other=0.0)
    tl.store(rm_ptr + offs_n, (1.0 - momentum) * rm + momentum * mean, mask=mask_n)
    tl.store(rv_ptr + offs_n, (1.0 - momentum) * rv + momentum * (tl.sum(sq, axis=0) / (M - 1)), mask=mask_n)


# num_batches_tracked += 1, as training-mode BatchNorm counts its calls
@triton.jit
def _count_batch_kernel(n_ptr):
    tl.store(n_ptr, tl.load(n_ptr) + 1)


# t = scale * ((y - mean[n]) * rstd[n] * gamma[n] + beta[n]);  out[m, :] = softmax(t[m, :])
# eval mode: normalise with the running statistics, as BatchNorm does for inference, and leave them be
@triton.jit
def _running_stats_kernel(rm_ptr, rv_ptr, mean_ptr, rstd_ptr, N, eps, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    m = cols < N
    tl.store(mean_ptr + cols, tl.load(rm_ptr + cols, mask=m, other=0.0).to(tl.float32), mask=m)
    rv = tl.load(rv_ptr + cols, mask=m, other=1.0).to(tl.float32)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(rv + eps), mask=m)


@triton.jit
def _bn_scale_softmax_kernel(
    y_ptr, mean_ptr, rstd_ptr, gamma_ptr, beta_ptr, scale_ptr, out_ptr,
    N,
    stride_ym, stride_om,
    stride_scale,  # 0 for a single scale value, 1 for one per feature
    BLOCK_N: tl.constexpr,  # power of two >= N: one program holds a whole row
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_ym + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + cols, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + cols, mask=mask, other=0.0)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.load(scale_ptr + cols * stride_scale, mask=mask, other=0.0).to(tl.float32)
    t = scale * ((y - mean) * rstd * gamma + beta)
    t = tl.where(mask, t, float("-inf"))
    e = tl.exp(t - tl.max(t, axis=0))
    e = tl.where(mask, e, 0.0)
    p = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * stride_om + cols, p.to(out_ptr.dtype.element_ty), mask=mask)


def _dot_precision(x: torch.Tensor) -> str:
    """Exact fp32 products for fp32 operands; 16-bit operands upcast to fp32 are exact in tf32."""
    return "ieee" if x.dtype == torch.float32 else "tf32"


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """x @ weight^T (+ bias) into a new fp32 [M, N] tensor (the intermediate the epilogue reads)."""
    M, K = x.shape
    N = weight.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    _linear_kernel[grid](
        x, weight, weight if bias is None else bias, out,
        M, N, K,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        out.stride(0), out.stride(1),
        HAS_BIAS=bias is not None,
        DOT_PRECISION=_dot_precision(x),
        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
    )
    return out


class Model(nn.Module):
    """Linear, training BatchNorm, scale, softmax: GEMM, batch-stats and normalise+softmax kernels."""

    def __init__(self, in_features, out_features, bn_eps=1e-5, bn_momentum=0.1, scale_shape=(1,)):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.softmax = nn.Softmax(dim=1)  # kept for parity with the reference; the kernel does dim 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = linear(x, self.gemm.weight, self.gemm.bias)
        M, N = y.shape
        mean = torch.empty((N,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((N,), device=x.device, dtype=torch.float32)
        if self.training:  # the batch's statistics, and the running ones updated
            _batch_stats_kernel[(triton.cdiv(N, 32),)](
                y, mean, rstd, self.bn.running_mean, self.bn.running_var, M, N, y.stride(0), y.stride(1),
                self.bn.eps, self.bn.momentum, BLOCK_M=32, BLOCK_N=32,
            )
            _count_batch_kernel[(1,)](self.bn.num_batches_tracked)
        else:
            _running_stats_kernel[(triton.cdiv(N, 32),)](
                self.bn.running_mean, self.bn.running_var, mean, rstd, N, self.bn.eps, BLOCK_N=32,
            )
        scale = self.scale.contiguous()
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _bn_scale_softmax_kernel[(M,)](
            y, mean, rstd, self.bn.weight, self.bn.bias, scale, out,
            N, y.stride(0), out.stride(0),
            0 if scale.numel() == 1 else 1,
            BLOCK_N=triton.next_power_of_2(N),
        )
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bn_eps = 1e-5
bn_momentum = 0.1
scale_shape = (1,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bn_eps, bn_momentum, scale_shape]
