"""relu(layer_norm(x @ W^T + b)) in Triton.

Tile sizes are module-level constants that the kernels read directly (Triton lets a kernel use a
global that is a tl.constexpr), so changing a tile means changing one line at the top. The host
side goes through two plain functions, `linear` and `layer_norm_relu`, one per kernel.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

GEMM_BM = tl.constexpr(64)
GEMM_BN = tl.constexpr(64)
GEMM_BK = tl.constexpr(32)
LN_BLOCK = tl.constexpr(512)


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, stride_x, stride_w, stride_y):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * GEMM_BM + tl.arange(0, GEMM_BM)
    offs_n = pid_n * GEMM_BN + tl.arange(0, GEMM_BN)
    offs_k = tl.arange(0, GEMM_BK)
    acc = tl.zeros((GEMM_BM, GEMM_BN), dtype=tl.float32)
    for k0 in range(0, K, GEMM_BK):
        ks = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * stride_x + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0).to(tl.float32)
        b = tl.load(w_ptr + offs_n[None, :] * stride_w + ks[:, None],
                    mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision="ieee")
    acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_y + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def layer_norm_relu_kernel(y_ptr, gamma_ptr, beta_ptr, out_ptr, N, stride_y, stride_out, eps):
    row = tl.program_id(0)
    y_row = y_ptr + row * stride_y
    cols = tl.arange(0, LN_BLOCK)

    total = tl.zeros((LN_BLOCK,), tl.float32)
    for start in range(0, N, LN_BLOCK):
        total += tl.load(y_row + start + cols, mask=start + cols < N, other=0.0)
    mean = tl.sum(total, axis=0) / N

    sq = tl.zeros((LN_BLOCK,), tl.float32)
    for start in range(0, N, LN_BLOCK):
        v = tl.load(y_row + start + cols, mask=start + cols < N, other=0.0)
        d = tl.where(start + cols < N, v - mean, 0.0)
        sq += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)

    for start in range(0, N, LN_BLOCK):
        mask = start + cols < N
        v = tl.load(y_row + start + cols, mask=mask, other=0.0)
        g = tl.load(gamma_ptr + start + cols, mask=mask, other=1.0).to(tl.float32)
        b = tl.load(beta_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
        o = tl.maximum((v - mean) * rstd * g + b, 0.0)
        tl.store(out_ptr + row * stride_out + start + cols, o.to(out_ptr.dtype.element_ty), mask=mask)


def linear(x, weight, bias):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(M, GEMM_BM.value), triton.cdiv(N, GEMM_BN.value))
    linear_kernel[grid](x, weight, bias, y, M, N, K, x.stride(0), weight.stride(0), y.stride(0))
    return y


def layer_norm_relu(y, weight, bias, eps, out_dtype):
    M, N = y.shape
    out = torch.empty((M, N), device=y.device, dtype=out_dtype)
    layer_norm_relu_kernel[(M,)](y, weight, bias, out, N, y.stride(0), out.stride(0), eps)
    return out


class Model(nn.Module):
    def __init__(self, in_features, out_features, eps=1e-5):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features, eps=eps)

    def forward(self, x):
        x = x.contiguous()
        y = linear(x, self.linear.weight, self.linear.bias)
        return layer_norm_relu(y, self.norm.weight, self.norm.bias, self.norm.eps, x.dtype)


batch_size = 1024
in_features = 8192
out_features = 8192
eps = 1e-5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, eps]
