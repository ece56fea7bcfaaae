"""Honest: GEMM with @triton.heuristics EVEN_K (unmasked K loop when K % BK == 0), epilogue fused."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})
@triton.jit
def _gemm(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk,
          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, EVEN_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # clamp rows/cols so unmasked K loads stay in bounds
    rmc = tl.minimum(rm, M - 1)
    rnc = tl.minimum(rn, N - 1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        if EVEN_K:
            a = tl.load(x_ptr + rmc[:, None] * sxm + kk[None, :] * sxk)
            b = tl.load(w_ptr + rnc[None, :] * swn + kk[:, None] * swk)
        else:
            a = tl.load(x_ptr + rmc[:, None] * sxm + kk[None, :] * sxk, mask=kk[None, :] < K, other=0.0)
            b = tl.load(w_ptr + rnc[None, :] * swn + kk[:, None] * swk, mask=kk[:, None] < K, other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    bias = tl.load(b_ptr + rnc)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        w = self.gemm.weight
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _gemm[(triton.cdiv(M, 16), triton.cdiv(N, 32))](x, w, self.bias, out, M, N, K,
                                                         x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                                         BM=16, BN=32, BK=16)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
