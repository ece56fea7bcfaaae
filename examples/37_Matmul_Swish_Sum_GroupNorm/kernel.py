"""Naive Triton port of KernelBench level 2, problem 37 (Matmul_Swish_Sum_GroupNorm).

A first port: a GEMM kernel with the Linear bias that writes the [batch, out] matrix, then one
program per (row, group) that applies Swish, adds the extra bias and normalises the group.
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
def _swish_bias_group_norm_kernel(
    y_ptr, extra_bias_ptr, gamma_ptr, beta_ptr, out_ptr,
    group_size, stride_ym, stride_om, eps,
    BLOCK_C: tl.constexpr,  # power of two >= group_size
):
    # s = sigmoid(y) * y + bias[c]; out = (s - mean_g) / sqrt(var_g + eps) * gamma[c] + beta[c]
    row = tl.program_id(0)
    group = tl.program_id(1)
    cols = group * group_size + tl.arange(0, BLOCK_C)
    mask = tl.arange(0, BLOCK_C) < group_size
    v = tl.load(y_ptr + row * stride_ym + cols, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(v) * v + tl.load(extra_bias_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(tl.where(mask, s, 0.0), axis=0) / group_size
    diff = tl.where(mask, s - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / group_size
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    z = diff / tl.sqrt(var + eps) * gamma + beta
    tl.store(out_ptr + row * stride_om + cols, z.to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    """Same parameters as the reference; forward runs only Triton kernels."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, bias_shape: tuple[int, ...]):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight, bias = self.matmul.weight, self.matmul.bias
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
        _swish_bias_group_norm_kernel[(M, groups)](
            y, self.bias, self.group_norm.weight, self.group_norm.bias, out,
            group_size, y.stride(0), out.stride(0), float(self.group_norm.eps),
            BLOCK_C=triton.next_power_of_2(group_size),
        )
        return out


batch_size = 32768
in_features = 1024
out_features = 4096
num_groups = 64
bias_shape = (out_features,)


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features, num_groups, bias_shape]
