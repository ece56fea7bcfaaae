"""Naive Triton port of KernelBench level 2, problem 99: Matmul_GELU_Softmax.

A first, straightforward port: a GEMM(+bias) kernel writes an fp32 intermediate to global memory,
then a row kernel (one program per row, the whole row in one power-of-two block) applies GELU
and the softmax. Operands are upcast to fp32 before tl.dot and the tiles are small fixed literals.
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


# g = 0.5 * y * (1 + erf(y / sqrt(2)))  (exact GELU);  out[m, :] = exp(g - max g) / sum exp(g - max g)
@triton.jit
def _gelu_softmax_kernel(
    y_ptr, out_ptr,
    N,
    stride_ym, stride_om,
    BLOCK_N: tl.constexpr,  # power of two >= N: one program holds a whole row
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    y = tl.load(y_ptr + row * stride_ym + cols, mask=mask, other=0.0).to(tl.float32)
    g = 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476))
    g = tl.where(mask, g, float("-inf"))
    e = tl.exp(g - tl.max(g, axis=0))
    e = tl.where(mask, e, 0.0)
    p = e / tl.sum(e, axis=0)
    p = tl.where(p < 1e-9, 0.0, p)
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
    """Linear, GELU, softmax over features: a GEMM kernel, then one row kernel."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = linear(x, self.linear.weight, self.linear.bias)
        M, N = y.shape
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _gelu_softmax_kernel[(M,)](
            y, out, N, y.stride(0), out.stride(0),
            BLOCK_N=triton.next_power_of_2(N),
        )
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
