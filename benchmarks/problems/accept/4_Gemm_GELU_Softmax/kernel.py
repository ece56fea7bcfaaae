"""softmax(gelu(x @ W^T + b), dim=1) with Triton.

Launch settings live in one table of triton.Config objects, shared by the kernels that work on
the same tiles; every grid is a lambda over the launch's meta-parameters.

The softmax is split across column tiles, so a row can be any width:
  1. gemm_gelu_kernel          h = gelu(x @ W^T + b), fp32
  2. softmax_partials_kernel   per (row, column tile): tile max and sum(exp(h - tile max))
  3. softmax_normalize_kernel  combine the partials of each row, write exp(h - max) / sum
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

CONFIGS = {
    "gemm": triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=2),
    "softmax": triton.Config({"BLOCK_M": 16, "BLOCK_N": 256}, num_warps=4, num_stages=1),
}


@triton.jit
def gemm_gelu_kernel(x_ptr, w_ptr, b_ptr, h_ptr, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(x_ptr + offs_m[:, None] * K + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0).to(tl.float32)
        b = tl.load(w_ptr + offs_n[None, :] * K + ks[:, None],
                    mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision="ieee")
    acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    h = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    tl.store(h_ptr + offs_m[:, None] * N + offs_n[None, :], h,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def softmax_partials_kernel(h_ptr, pmax_ptr, psum_ptr, M, N, T,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    h = tl.load(h_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask, other=float("-inf"))
    tile_max = tl.max(h, axis=1)
    tile_sum = tl.sum(tl.exp(h - tile_max[:, None]), axis=1)
    tl.store(pmax_ptr + offs_m * T + pid_n, tile_max, mask=offs_m < M)
    tl.store(psum_ptr + offs_m * T + pid_n, tile_sum, mask=offs_m < M)


@triton.jit
def softmax_normalize_kernel(h_ptr, pmax_ptr, psum_ptr, out_ptr, M, N, T,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_t = tl.arange(0, BLOCK_T)
    pmask = (offs_m[:, None] < M) & (offs_t[None, :] < T)
    pmax = tl.load(pmax_ptr + offs_m[:, None] * T + offs_t[None, :], mask=pmask, other=float("-inf"))
    psum = tl.load(psum_ptr + offs_m[:, None] * T + offs_t[None, :], mask=pmask, other=0.0)
    row_max = tl.max(pmax, axis=1)
    row_sum = tl.sum(psum * tl.exp(pmax - row_max[:, None]), axis=1)

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    h = tl.load(h_ptr + offs_m[:, None] * N + offs_n[None, :], mask=mask, other=0.0)
    y = tl.exp(h - row_max[:, None]) / row_sum[:, None]
    tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


def _launch_opts(cfg):
    return dict(**cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.out_features

        h = torch.empty((M, N), device=x.device, dtype=torch.float32)
        gemm_gelu_kernel[lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))](
            x, self.linear.weight, self.linear.bias, h, M, N, K, **_launch_opts(CONFIGS["gemm"]))

        sm = CONFIGS["softmax"]
        T = triton.cdiv(N, sm.kwargs["BLOCK_N"])
        pmax = torch.empty((M, T), device=x.device, dtype=torch.float32)
        psum = torch.empty((M, T), device=x.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))  # noqa: E731
        softmax_partials_kernel[grid](h, pmax, psum, M, N, T, **_launch_opts(sm))

        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        softmax_normalize_kernel[grid](h, pmax, psum, out, M, N, T,
                                       BLOCK_T=max(2, triton.next_power_of_2(T)), **_launch_opts(sm))
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
