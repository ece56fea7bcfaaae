"""HONEST h03 (76): split-K GEMM with atomic adds into a zeroed fp32 buffer, then a bias+ReLU kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mm_splitk(x_ptr, w_ptr, acc_ptr, M, N, K, sxm, sxk, swn, swk, K_PER: tl.constexpr,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ps = tl.program_id(2)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(ps * K_PER, ps * K_PER + K_PER, BK):
        k = k0 + ok
        a = tl.load(x_ptr + om[:, None] * sxm + k[None, :] * sxk, mask=(om[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(w_ptr + k[:, None] * swk + on[None, :] * swn, mask=(k[:, None] < K) & (on[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.atomic_add(acc_ptr + om[:, None] * N + on[None, :], acc, mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def _bias_relu(acc_ptr, bias_ptr, out_ptr, total, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    y = tl.load(acc_ptr + offs, mask=m, other=0.0) + tl.load(bias_ptr + offs % N, mask=m, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(y, 0.0), mask=m)


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        M, K = x.shape
        w = self.gemm.weight
        N = w.shape[0]
        acc = torch.zeros((M, N), device=x.device, dtype=torch.float32)
        split = 2
        k_per = triton.cdiv(triton.cdiv(K, split), 16) * 16
        _mm_splitk[(triton.cdiv(M, 16), triton.cdiv(N, 16), split)](
            x, w, acc, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
            K_PER=k_per, BM=16, BN=16, BK=16)
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _bias_relu[(triton.cdiv(M * N, 256),)](acc, self.bias.contiguous(), out, M * N, N, BLOCK=256)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
