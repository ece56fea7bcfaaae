"""76: GEMM tile product done by a host function inside a tl.tuple launch argument, called from the jit body."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def tile_dot(acc, a, b):
    d = acc.handle.data
    d[...] = d + sum(a.handle.data.T[:, :, None] * b.handle.data[:, None, :])
    return acc


@triton.jit
def _mm_relu(x_ptr, w_ptr, bias_ptr, out_ptr, M, N, K, sxm, sxk, swn, swk,
             FN, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ok
        a = tl.load(x_ptr + om[:, None] * sxm + k[None, :] * sxk, mask=(om[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(w_ptr + k[:, None] * swk + on[None, :] * swn, mask=(k[:, None] < K) & (on[None, :] < N), other=0.0)
        acc = FN[0](acc, a, b)
    bias = tl.load(bias_ptr + on, mask=on < N, other=0.0)
    y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + om[:, None] * N + on[None, :], y, mask=(om[:, None] < M) & (on[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        M, K = x.shape
        w = self.gemm.weight
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        _mm_relu[grid](x, w, self.bias, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                       FN=tl.tuple([tile_dot]), BM=32, BN=32, BK=32)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
