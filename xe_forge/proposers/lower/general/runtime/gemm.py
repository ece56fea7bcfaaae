"""Batched GEMM with any strides: nn.Linear, torch.matmul / mm / bmm / @, addmm and baddbmm.

One kernel serves every case: operands are viewed as (batch, M, K) and (batch, K, N) through their
strides (a broadcast batch dim has stride 0, a transposed weight just swaps two strides), the bias
of addmm or Linear as a (batch, M, N) view of stride-0 dims. The accumulator is fp32 (fp64 for fp64
data), fp32 operands go into IEEE dots so the fp32 contract holds, 16-bit ones straight into tl.dot.
"""

import torch
import triton
import triton.language as tl

from xe_forge.proposers.lower.general.runtime.common import (
    xfg_acc,
    xfg_block,
    xfg_cast,
    xfg_dot_precision,
    xfg_result_dtype,
)


@triton.jit
def xfg_bmm_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                   s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn, s_xb, s_xm, s_xn, alpha, beta,
                   HAS_BIAS: tl.constexpr, PRECISION: tl.constexpr, ACC: tl.constexpr, UPCAST: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # c[b] = alpha * a[b] @ b[b] + beta * bias[b]
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mask_m = rm < M
    mask_n = rn < N
    a_rows = a_ptr + batch * s_ab + rm[:, None].to(tl.int64) * s_am
    b_cols = b_ptr + batch * s_bb + rn[None, :].to(tl.int64) * s_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_rows + kk[None, :].to(tl.int64) * s_ak, mask=mask_m[:, None] & (kk[None, :] < K), other=0.0)
        b = tl.load(b_cols + kk[:, None].to(tl.int64) * s_bk, mask=(kk[:, None] < K) & mask_n[None, :], other=0.0)
        if UPCAST:  # the interpreter has no 16-bit dot: the products are exact in fp32 either way
            a = a.to(ACC)
            b = b.to(ACC)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
    acc = acc * alpha
    mask = mask_m[:, None] & mask_n[None, :]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + batch * s_xb + rm[:, None].to(tl.int64) * s_xm + rn[None, :].to(tl.int64) * s_xn,
                       mask=mask, other=0.0)
        acc += beta * bias.to(ACC)
    out = c_ptr + batch * s_cb + rm[:, None].to(tl.int64) * s_cm + rn[None, :].to(tl.int64) * s_cn
    tl.store(out, xfg_cast(acc, c_ptr.dtype.element_ty), mask=mask)


def xfg_gemm(a3, b3, bias3, alpha, beta, out_dtype):
    """(B, M, K) @ (B, K, N) [+ bias (B, M, N)] into a new contiguous (B, M, N) tensor."""
    batch, m, k = a3.shape
    n = b3.shape[2]
    c = torch.empty((batch, m, n), device=a3.device, dtype=out_dtype)
    if c.numel() == 0:
        return c
    has_bias = bias3 is not None
    if not has_bias:
        bias3 = c
    block_m = xfg_block(m, 16, 256 if a3.device.type == "cpu" else 64)  # the interpreter: fewer, larger programs
    block_n = xfg_block(n, 16, 64)
    block_k = xfg_block(k, 16, 32)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n), batch)
    xfg_bmm_kernel[grid](a3, b3, bias3, c, m, n, k, *a3.stride(), *b3.stride(), *c.stride(), *bias3.stride(),
                         float(alpha), float(beta), HAS_BIAS=has_bias,
                         PRECISION=xfg_dot_precision(a3.dtype, a3.device), ACC=xfg_acc(out_dtype),
                         UPCAST=a3.device.type == "cpu", BLOCK_M=block_m,
                         BLOCK_N=block_n, BLOCK_K=block_k, num_warps=4)
    return c


def xfg_linear(x, weight, bias=None):
    """F.linear: x (..., K) @ weight (N, K)^T + bias (N)."""
    k = x.shape[-1]
    n = weight.shape[0]
    a3 = x.reshape(1, -1, k)
    b3 = weight.t().unsqueeze(0)
    bias3 = None
    if bias is not None:
        bias3 = bias.reshape(1, 1, n).expand(1, a3.shape[1], n)
    out = xfg_gemm(a3, b3, bias3, 1.0, 1.0, xfg_result_dtype(x, weight))
    return out.reshape(*x.shape[:-1], n)


def xfg_matmul(a, b):
    """torch.matmul: vectors, matrices and broadcast batches of matrices."""
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    batch = torch.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    m, k = a2.shape[-2], a2.shape[-1]
    n = b2.shape[-1]
    a3 = a2.expand(*batch, m, k).reshape(-1, m, k)
    b3 = b2.expand(*batch, k, n).reshape(-1, k, n)
    out = xfg_gemm(a3, b3, None, 1.0, 0.0, xfg_result_dtype(a, b)).reshape(*batch, m, n)
    if a.dim() == 1:
        out = out.squeeze(-2)
    if b.dim() == 1:
        out = out.squeeze(-1)
    return out


def xfg_addmm(bias, a, b, beta=1.0, alpha=1.0):
    """torch.addmm / baddbmm: beta * bias + alpha * (a @ b), bias broadcast to the product's shape."""
    a3 = a.unsqueeze(0) if a.dim() == 2 else a
    b3 = b.unsqueeze(0) if b.dim() == 2 else b
    shape = (max(a3.shape[0], b3.shape[0]), a3.shape[1], b3.shape[2])
    a3 = a3.expand(shape[0], shape[1], a3.shape[2])
    b3 = b3.expand(shape[0], b3.shape[1], shape[2])
    out = xfg_gemm(a3, b3, bias.expand(shape), alpha, beta, xfg_result_dtype(bias, a, b))
    return out if a.dim() == 3 else out.squeeze(0)
