"""HONEST (76): pre-packs W^T (K-major, contiguous) once per weight version (`_version`, data_ptr and
shape as the key), as the docs recommend, then a GEMM reading the packed copy; bias+ReLU fused."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gemm_packed(x_ptr, wt_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(wt_ptr + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :], 0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.packed_key = None
        self.packed = None

    def _pack(self):
        w = self.gemm.weight
        key = (w._version, w.data_ptr(), tuple(w.shape), w.device)
        if key != self.packed_key:
            self.packed = w.detach().t().contiguous()
            self.packed_key = key
        return self.packed

    def forward(self, x):
        wt = self._pack()
        M, K = x.shape
        N = wt.shape[1]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _gemm_packed[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, wt, self.bias, out, M, N, K, x.stride(0),
                                                              x.stride(1), BM=32, BN=32, BK=32)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
