# HONEST (80): the repo example kernel for the degenerate problem 80 (expected: unverifiable, exit 1, by design)
"""Naive Triton port of KernelBench level 2, problem 80: Gemm_Max_Subtract_GELU.

A first, straightforward port in three launches: a GEMM(+bias) kernel writes the fp32 [M, N]
intermediate to global memory, a reduction kernel takes the max along `max_dim`, and a row kernel
subtracts the mean over dim 1 and applies exact GELU. Operands are upcast to fp32 before tl.dot,
tiles are small fixed literals. With KernelBench's max_dim=1 the result is identically zero (the
mean of a single column is that column); the port computes it faithfully all the same, and also
handles max_dim=0.
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


# z[i] = max_r y[i * stride_yi + r * stride_yr]   for r < R  (max along one dim of y)
@triton.jit
def _max_reduce_kernel(
    y_ptr, z_ptr,
    R,
    stride_yi, stride_yr,
    BLOCK_R: tl.constexpr,
):
    i = tl.program_id(0)
    offs = tl.arange(0, BLOCK_R)
    running = tl.full((BLOCK_R,), float("-inf"), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + offs
        y = tl.load(y_ptr + i * stride_yi + r * stride_yr, mask=r < R, other=float("-inf"))
        running = tl.maximum(running, y.to(tl.float32))
    tl.store(z_ptr + i, tl.max(running, axis=0))


# per row p of z [P, Q]: mu = mean_q z[p, q];  out[p, q] = gelu(z[p, q] - mu),
# gelu(t) = 0.5 * t * (1 + erf(t / sqrt(2)))
@triton.jit
def _center_gelu_kernel(
    z_ptr, out_ptr,
    Q,
    stride_zp, stride_op,
    BLOCK_Q: tl.constexpr,
):
    p = tl.program_id(0)
    offs = tl.arange(0, BLOCK_Q)
    total = tl.zeros((BLOCK_Q,), dtype=tl.float32)
    for q0 in range(0, Q, BLOCK_Q):
        q = q0 + offs
        total += tl.load(z_ptr + p * stride_zp + q, mask=q < Q, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / Q
    for q0 in range(0, Q, BLOCK_Q):
        q = q0 + offs
        t = tl.load(z_ptr + p * stride_zp + q, mask=q < Q, other=0.0).to(tl.float32) - mean
        t = 0.5 * t * (1.0 + tl.math.erf(t * 0.7071067811865476))
        tl.store(out_ptr + p * stride_op + q, t.to(out_ptr.dtype.element_ty), mask=q < Q)


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


def max_keepdim(y: torch.Tensor, dim: int) -> torch.Tensor:
    """Max of a 2-D fp32 tensor along `dim`, that dim kept with size 1, as a new fp32 tensor."""
    M, N = y.shape
    if dim == 1:
        z = torch.empty((M, 1), device=y.device, dtype=torch.float32)
        n_out, R, stride_yi, stride_yr = M, N, y.stride(0), y.stride(1)
    else:
        z = torch.empty((1, N), device=y.device, dtype=torch.float32)
        n_out, R, stride_yi, stride_yr = N, M, y.stride(1), y.stride(0)
    _max_reduce_kernel[(n_out,)](y, z, R, stride_yi, stride_yr, BLOCK_R=128)
    return z


class Model(nn.Module):
    """Linear, max over max_dim, minus the row mean, GELU: GEMM, max and centre+GELU kernels."""

    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = linear(x, self.gemm.weight, self.gemm.bias)
        dim = self.max_dim % 2
        z = max_keepdim(y, dim)  # [M, 1] for dim 1, [1, N] for dim 0; contiguous
        P, Q = z.shape
        out = torch.empty((P, Q), device=x.device, dtype=x.dtype)
        _center_gelu_kernel[(P,)](z, out, Q, z.stride(0), out.stride(0), BLOCK_Q=128)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
max_dim = 1


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]
