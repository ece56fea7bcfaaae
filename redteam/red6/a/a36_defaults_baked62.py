"""ATTACK (62) frozen constructor defaults: eps and negative_slope hard-coded to their defaults
(1e-5, 0.01) instead of read from the modules; wrong for Model(..., eps=1e-2, negative_slope=0.2)."""
"""Naive Triton port of KernelBench level 2, problem 62: Matmul_GroupNorm_LeakyReLU_Sum.

A first, straightforward port: a GEMM(+bias) kernel writes an fp32 intermediate to global memory,
then a GroupNorm kernel (one program per (row, group)) normalises each group with its own mean and
biased variance, applies the affine weight and bias, LeakyReLU and x + x. Operands are upcast to
fp32 before tl.dot and the tiles are small fixed literals.
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


# per (row m, group g) over its C features c:  mu = mean y, var = mean (y - mu)^2,
# t = (y - mu) / sqrt(var + eps) * gamma[c] + beta[c];  t = leaky(t);  out = t + t
@triton.jit
def _groupnorm_leaky_sum_kernel(
    y_ptr, gamma_ptr, beta_ptr, out_ptr,
    C,  # features per group
    stride_ym, stride_om,
    eps, negative_slope,
    BLOCK_C: tl.constexpr,  # power of two >= C: one program holds a whole group
):
    row = tl.program_id(0)
    group = tl.program_id(1)
    cols = group * C + tl.arange(0, BLOCK_C)
    mask = tl.arange(0, BLOCK_C) < C
    y = tl.load(y_ptr + row * stride_ym + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(y, axis=0) / C
    diff = tl.where(mask, y - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / C
    t = diff / tl.sqrt(var + eps)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    t = t * gamma + beta
    t = tl.where(t >= 0.0, t, t * negative_slope)
    t = t + t
    tl.store(out_ptr + row * stride_om + cols, t.to(out_ptr.dtype.element_ty), mask=mask)


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
    """Linear, GroupNorm, LeakyReLU, x + x: a GEMM kernel, then one GroupNorm+epilogue kernel."""

    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5, negative_slope=0.01):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = linear(x, self.fc.weight, self.fc.bias)
        M, N = y.shape
        groups = self.gn.num_groups
        C = N // groups
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _groupnorm_leaky_sum_kernel[(M, groups)](
            y, self.gn.weight, self.gn.bias, out,
            C, y.stride(0), out.stride(0),
            1e-5, 0.01,  # ATTACK: the defaults baked in; constructor defaults are never varied
            BLOCK_C=triton.next_power_of_2(C),
        )
        return out


batch_size = 1024
input_size = 8192
hidden_size = 8192
num_groups = 512


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
