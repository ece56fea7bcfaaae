"""Naive Triton port of KernelBench level 2, problem 76: Gemm_Add_ReLU.

A first, straightforward port: one GEMM kernel that writes an fp32 intermediate, then one
element-wise kernel for the bias and the ReLU. Operands are upcast to fp32 before tl.dot and
the tiles are small fixed literals; the optimizer is expected to improve all of this.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


# out[m, n] = sum_k x[m, k] * w[n, k]   (x @ W^T with W in nn.Linear's [out, in] layout)
@triton.jit
def _matmul_kernel(
    x_ptr, w_ptr, out_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_om, stride_on,
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
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             acc.to(out_ptr.dtype.element_ty), mask=out_mask)


# out[m, n] = max(y[m, n] + bias[n], 0)   (y contiguous [M, N])
@triton.jit
def _bias_relu_kernel(
    y_ptr, bias_ptr, out_ptr,
    n_elements, N,
    BLOCK_SIZE: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + offs % N, mask=mask, other=0.0).to(tl.float32)
    y = tl.maximum(y + bias, 0.0)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _dot_precision(x: torch.Tensor) -> str:
    """Exact fp32 products for fp32 operands; 16-bit operands upcast to fp32 are exact in tf32."""
    return "ieee" if x.dtype == torch.float32 else "tf32"


def matmul(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x @ weight^T into a new fp32 [M, N] tensor."""
    M, K = x.shape
    N = weight.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    _matmul_kernel[grid](
        x, weight, out,
        M, N, K,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        out.stride(0), out.stride(1),
        DOT_PRECISION=_dot_precision(x),
        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
    )
    return out


class Model(nn.Module):
    """y = relu(x @ W^T + bias): a GEMM kernel, then a bias + ReLU kernel."""

    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = matmul(x, self.gemm.weight)
        M, N = y.shape
        bias = self.bias.contiguous()
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        n_elements = M * N
        _bias_relu_kernel[(triton.cdiv(n_elements, 1024),)](
            y, bias, out, n_elements, N, BLOCK_SIZE=1024,
        )
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
