"""Honest: persistent GEMM (fixed number of programs looping over output tiles), epilogue fused."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _persistent(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk,
                NUM_PROGS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * tiles_n
    for t in range(pid, num_tiles, NUM_PROGS):
        tm = t // tiles_n
        tn = t % tiles_n
        rm = tm * BM + tl.arange(0, BM)
        rn = tn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            kk = k0 + rk
            a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk, mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
        bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
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
        tiles = triton.cdiv(M, 32) * triton.cdiv(N, 32)
        progs = min(tiles, 4)
        _persistent[(progs,)](x, w, self.bias, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                              NUM_PROGS=progs, BM=32, BN=32, BK=32)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
