"""Honest: the fused GEMM+bias+ReLU registered as a torch.library.triton_op, launched through wrap_triton."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _k(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk, mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :], 0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton_op("red8h11::gemm_bias_relu", mutates_args={})
def gemm_bias_relu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = x.shape
    N = w.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    wrap_triton(_k)[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, w, b, out, M, N, K, x.stride(0), x.stride(1),
                                                              w.stride(0), w.stride(1), BM=32, BN=32, BK=32)
    return out


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return gemm_bias_relu(x, self.gemm.weight, self.bias)


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
