"""Naive Triton port of KernelBench level 2, problem 45 (Gemm_Sigmoid_LogSumExp).

A first port in three launches: the same GEMM kernel twice (the first with a sigmoid epilogue),
then a two-pass row logsumexp (max, then sum of exponentials) over the [batch, output] matrix.
Both intermediates go through memory. Fixed 64x64x32 tiles, fp32 upcasts of both operands.
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
    APPLY_SIGMOID: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    DOT_PRECISION: tl.constexpr,  # "ieee" for fp32 operands, "tf32" otherwise
):
    # out[m, n] = act(sum_k x[m, k] * w[n, k] + b[n]), act = sigmoid or identity
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
    if APPLY_SIGMOID:
        acc = tl.sigmoid(acc)
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(
        out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
        acc.to(out_ptr.dtype.element_ty), mask=out_mask,
    )


@triton.jit
def _row_logsumexp_kernel(
    y_ptr, out_ptr, N, stride_ym,
    BLOCK_N: tl.constexpr,
):
    # out[m] = mx + log(sum_n exp(y[m, n] - mx)), mx = max_n y[m, n]
    row = tl.program_id(0)
    run_max = tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        v = tl.load(y_ptr + row * stride_ym + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        run_max = tl.maximum(run_max, v)
    mx = tl.max(run_max, axis=0)
    total = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        v = tl.load(y_ptr + row * stride_ym + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        total += tl.exp(v - mx)
    lse = mx + tl.log(tl.sum(total, axis=0))
    tl.store(out_ptr + row, lse.to(out_ptr.dtype.element_ty))


class Model(nn.Module):
    """Same parameters as the reference; forward runs only Triton kernels."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def _linear(self, x: torch.Tensor, layer: nn.Linear, apply_sigmoid: bool) -> torch.Tensor:
        """One launch of the GEMM kernel: layer(x), optionally followed by a sigmoid."""
        weight, bias = layer.weight, layer.bias
        M, K = x.shape
        N = weight.shape[0]
        precision = "ieee" if x.dtype == torch.float32 else "tf32"
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        _linear_bias_kernel[grid](
            x, weight, bias, y, M, N, K,
            x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
            APPLY_SIGMOID=apply_sigmoid,
            BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, DOT_PRECISION=precision,
        )
        return y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        hidden = self._linear(x, self.linear1, apply_sigmoid=True)
        logits = self._linear(hidden, self.linear2, apply_sigmoid=False)
        M, N = logits.shape
        out = torch.empty((M,), device=x.device, dtype=x.dtype)
        _row_logsumexp_kernel[(M,)](logits, out, N, logits.stride(0), BLOCK_N=1024)
        return out


batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, input_size)]


def get_init_inputs() -> list:
    return [input_size, hidden_size, output_size]
