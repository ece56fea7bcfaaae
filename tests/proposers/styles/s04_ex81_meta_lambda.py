"""Style: every grid is a `lambda meta:` reading the tiles from the launch's meta-parameters, with
literal tiles at the launch and short names. KernelBench 81: clamp(tanh(clamp(swish(x W^T + b) / 2)))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_bias(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, sxm, swn, som,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(x_ptr + rm[:, None] * sxm + (k + rk)[None, :],
                          mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0).to(tl.float32)
        b = tl.load(w_ptr + rn[None, :] * swn + (k + rk)[:, None],
                          mask=(rn[None, :] < N) & ((k + rk)[:, None] < K), other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    tl.store(out_ptr + rm[:, None] * som + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def swish_chain(y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    v = tl.load(y_ptr + offs, mask=inside, other=0.0)
    v = v * tl.sigmoid(v) / 2.0
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    v = 2.0 * tl.sigmoid(2.0 * v) - 1.0
    v = tl.minimum(tl.maximum(v, -1.0), 1.0)
    tl.store(out_ptr + offs, v.to(out_ptr.dtype.element_ty), mask=inside)


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        x = x.contiguous()
        w, b = self.gemm.weight, self.gemm.bias
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        matmul_bias[lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))](
            x, w, b, y, M, N, K, x.stride(0), w.stride(0), y.stride(0), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        swish_chain[lambda meta: (triton.cdiv(M * N, meta["BLOCK"]),)](y, out, M * N, BLOCK=1024)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
