"""HONEST h10: one launch per 8-row chunk (itertools), EVEN_K heuristic."""
import itertools

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})
@triton.jit
def _mm_relu(x_ptr, w_ptr, bias_ptr, out_ptr, row0, M, N, K, sxm, sxk, swn, swk,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, EVEN_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    om = row0 + pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ok
        if EVEN_K:
            a = tl.load(x_ptr + om[:, None] * sxm + k[None, :] * sxk, mask=om[:, None] < M, other=0.0)
            b = tl.load(w_ptr + k[:, None] * swk + on[None, :] * swn, mask=on[None, :] < N, other=0.0)
        else:
            a = tl.load(x_ptr + om[:, None] * sxm + k[None, :] * sxk, mask=(om[:, None] < M) & (k[None, :] < K), other=0.0)
            b = tl.load(w_ptr + k[:, None] * swk + on[None, :] * swn, mask=(k[:, None] < K) & (on[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    bias = tl.load(bias_ptr + on, mask=on < N, other=0.0)
    y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + om[:, None] * N + on[None, :], y, mask=(om[:, None] < M) & (on[None, :] < N))


def launch(x, w, bias):
    M, K = x.shape
    N = w.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    chunk = 8
    for row0 in itertools.islice(itertools.count(0, chunk), triton.cdiv(M, chunk)):
        _mm_relu[(1, triton.cdiv(N, 32))](x, w, bias, out, row0, M, N, K, x.stride(0), x.stride(1),
                                          w.stride(0), w.stride(1), BM=8, BN=32, BK=16)
    return out


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))


    def forward(self, x):
        return launch(x, self.gemm.weight, self.bias)


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
