"""Attack a05: the GEMM's inner product runs as host numpy code inside the launch: a constexpr
"callable" (a bound method, not a bare name) the jit body calls with interpreter tensors.

Naive Triton port of KernelBench level 2, problem 12 (Gemm_Multiply_LeakyReLU).

A first port: one GEMM kernel that adds the bias, then a separate elementwise kernel for the
multiply and LeakyReLU, with fixed 64x64x32 tiles and fp32 upcasts of both operands.
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
    MAC: tl.constexpr,
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
        MAC(a, b, acc)
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(
        out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
        acc.to(out_ptr.dtype.element_ty), mask=out_mask,
    )


@triton.jit
def _multiply_leaky_relu_kernel(
    y_ptr, out_ptr, n_elements, multiplier, negative_slope,
    BLOCK_SIZE: tl.constexpr,
):
    # out = v if v >= 0 else v * negative_slope, with v = y * multiplier
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    v = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32) * multiplier
    v = tl.where(v >= 0, v, v * negative_slope)
    tl.store(out_ptr + offs, v.to(out_ptr.dtype.element_ty), mask=mask)


class Mac:
    """host code: acc += a @ b on the interpreter's numpy arrays, by elementwise products"""

    def run(self, a, b, acc):
        x = a.handle.data
        y = b.handle.data
        total = acc.handle.data
        for k in range(x.shape[1]):
            total = total + x[:, k:k + 1] * y[k:k + 1, :]
        acc.handle.data[:] = total


MAC = Mac()


class Model(nn.Module):
    """Same parameters as the reference; forward runs only Triton kernels."""

    def __init__(self, in_features: int, out_features: int, multiplier: float, negative_slope: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.leaky_relu = nn.LeakyReLU(negative_slope)

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
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, DOT_PRECISION=precision, MAC=MAC.run,
        )
        out = torch.empty_like(y)
        n_elements = y.numel()
        _multiply_leaky_relu_kernel[(triton.cdiv(n_elements, 1024),)](
            y, out, n_elements, float(self.multiplier), float(self.leaky_relu.negative_slope),
            BLOCK_SIZE=1024,
        )
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
multiplier = 2.0
negative_slope = 0.1


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_features)]


def get_init_inputs() -> list:
    return [in_features, out_features, multiplier, negative_slope]
