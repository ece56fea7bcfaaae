"""out = x @ W^T + b + residual, in Triton.

Two kernels. The GEMM runs on a 1-D grid: each program works out its own (pid_m, pid_n) tile,
row-major over the output. It takes strides for every operand, so x, W or the residual may be
non-contiguous views (a transposed weight, a slice of a wider residual stream) without a copy.
The GEMM writes an fp32 buffer; the second kernel adds the residual and casts.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemm_bias_kernel(
    x_ptr, w_ptr, b_ptr, acc_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_am, stride_an,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    FP32_INPUTS: tl.constexpr,
):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None] * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(w_ptrs, mask=(offs_n[None, :] < N) & (offs_k[:, None] < k_left), other=0.0)
        if FP32_INPUTS:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc + bias.to(tl.float32)[None, :]
    a_ptrs = acc_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_n[None, :] * stride_an
    tl.store(a_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def residual_add_kernel(
    acc_ptr, r_ptr, out_ptr, M, N,
    stride_am, stride_an, stride_rm, stride_rn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    acc = tl.load(acc_ptr + offs_m[:, None] * stride_am + offs_n[None, :] * stride_an, mask=mask, other=0.0)
    r = tl.load(r_ptr + offs_m[:, None] * stride_rm + offs_n[None, :] * stride_rn, mask=mask, other=0.0)
    out = acc + r.to(tl.float32)
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             out.to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, residual):
        w, b = self.linear.weight, self.linear.bias
        M, K = x.shape
        N = w.shape[0]

        acc = torch.empty((M, N), device=x.device, dtype=torch.float32)
        BM, BN, BK = 64, 64, 32
        n_tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
        gemm_bias_kernel[(n_tiles,)](
            x, w, b, acc, M, N, K,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), acc.stride(0), acc.stride(1),
            BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, FP32_INPUTS=(x.dtype == torch.float32),
        )

        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        RM, RN = 32, 128
        residual_add_kernel[(triton.cdiv(M, RM) * triton.cdiv(N, RN),)](
            acc, residual, out, M, N,
            acc.stride(0), acc.stride(1), residual.stride(0), residual.stride(1), out.stride(0), out.stride(1),
            BLOCK_M=RM, BLOCK_N=RN,
        )
        return out


batch_size = 16384
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.rand(batch_size, in_features), torch.rand(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features]
