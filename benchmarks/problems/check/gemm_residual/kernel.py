"""Triton port of y = x @ W^T + b + r: one GEMM kernel with the bias and the residual in its epilogue."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemm_residual_kernel(x_ptr, w_ptr, b_ptr, r_ptr, y_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        kk = k + rk
        a = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * K + kk[:, None], mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc += tl.dot(a, b)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    acc += tl.load(r_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(y_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.proj = nn.Linear(features, features)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        M, K = x.shape
        N = self.proj.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
        gemm_residual_kernel[grid](x, self.proj.weight, self.proj.bias, residual, y, M, N, K,
                                   BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)
        return y


tokens = 16384
features = 4096


def get_inputs():
    return [torch.randn(tokens, features), torch.randn(tokens, features)]


def get_init_inputs():
    return [features]
