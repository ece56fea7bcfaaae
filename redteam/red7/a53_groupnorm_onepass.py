"""ATTACK a53 (30): one-pass GroupNorm variance E[x^2]-E[x]^2 (catastrophic cancellation at large offsets)."""
"""Naive Triton port of KernelBench level 2, problem 30 (Gemm_GroupNorm_Hardtanh).

A first port: a GEMM kernel with bias that writes the [batch, out] matrix, then a GroupNorm +
Hardtanh kernel with one program per (row, group) that reads it back. Fixed 64x64x32 tiles, fp32
upcasts of both operands.
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
def _group_norm_hardtanh_kernel(
    y_ptr, gamma_ptr, beta_ptr, out_ptr,
    group_size, stride_ym, stride_om, eps, clamp_min, clamp_max,
    BLOCK_C: tl.constexpr,  # power of two >= group_size
):
    # out = clamp((y - mean_g) / sqrt(var_g + eps) * gamma[c] + beta[c], clamp_min, clamp_max)
    row = tl.program_id(0)
    group = tl.program_id(1)
    cols = group * group_size + tl.arange(0, BLOCK_C)
    mask = tl.arange(0, BLOCK_C) < group_size
    v = tl.load(y_ptr + row * stride_ym + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / group_size
    diff = tl.where(mask, v - mean, 0.0)
    var = tl.maximum(tl.sum(v * v, axis=0) / group_size - mean * mean, 0.0)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    z = diff / tl.sqrt(var + eps) * gamma + beta
    z = tl.minimum(tl.maximum(z, clamp_min), clamp_max)
    tl.store(out_ptr + row * stride_om + cols, z.to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    """Same parameters as the reference; forward runs only Triton kernels."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, hardtanh_min: float,
                 hardtanh_max: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

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
        groups = self.group_norm.num_groups
        group_size = N // groups
        out = torch.empty_like(y)
        _group_norm_hardtanh_kernel[(M, groups)](
            y, self.group_norm.weight, self.group_norm.bias, out,
            group_size, y.stride(0), out.stride(0), float(self.group_norm.eps),
            float(self.hardtanh.min_val), float(self.hardtanh.max_val),
            BLOCK_C=triton.next_power_of_2(group_size),
        )
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 16
hardtanh_min = -2.0
hardtanh_max = 2.0


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features, num_groups, hardtanh_min, hardtanh_max]
