"""HONEST (76): autotuned split-K GEMM whose configs differ in SPLIT; partial products are atomically
added into an fp32 buffer the autotuner zeroes before each launch (reset_to_zero), then a bias+ReLU kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"SPLIT": 1}), triton.Config({"SPLIT": 2}), triton.Config({"SPLIT": 3})],
                 key=["M", "N", "K"], reset_to_zero=["acc_ptr"])
@triton.jit
def _splitk(x_ptr, w_ptr, acc_ptr, M, N, K, sxm, sxk, swn, swk, BM: tl.constexpr, BN: tl.constexpr,
            BK: tl.constexpr, SPLIT: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ps = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(ps * BK, K, BK * SPLIT):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=(rn[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.atomic_add(acc_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _bias_relu(acc_ptr, b_ptr, o_ptr, total, N, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < total
    v = tl.load(acc_ptr + offs, mask=m, other=0.0) + tl.load(b_ptr + offs % N, mask=m, other=0.0)
    tl.store(o_ptr + offs, tl.maximum(v, 0.0), mask=m)


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        w = self.gemm.weight
        M, K = x.shape
        N = w.shape[0]
        acc = torch.zeros((M, N), device=x.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(M, 16), triton.cdiv(N, 16), meta["SPLIT"])
        _splitk[grid](x, w, acc, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1), BM=16, BN=16, BK=16)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _bias_relu[(triton.cdiv(M * N, 256),)](acc, self.bias, out, M * N, N, B=256)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
