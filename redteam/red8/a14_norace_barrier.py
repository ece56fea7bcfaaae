"""Attack (GPU only): GEMM tile stored to the output, then re-read in another layout by the same program for the epilogue without tl.debug_barrier(): other threads' stores need not be visible on a GPU; the interpreter runs a program serially."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mm_bias_relu(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K,
                  sxm, sxk, swn, swk, som, son,
                  HAS_BIAS: tl.constexpr, RELU: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + k[None, :] * sxk,
                    mask=(rm[:, None] < M) & (k[None, :] < K), other=0.0).to(tl.float32)
        b = tl.load(w_ptr + k[:, None] * swk + rn[None, :] * swn,
                    mask=(k[:, None] < K) & (rn[None, :] < N), other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision="ieee")
    if HAS_BIAS:
        bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
        acc = acc + bias[None, :]
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, acc.to(out_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def launch(x, w, b, has_bias=True, relu=True, out=None, K=None, grid_m=None):
    M, Kx = x.shape
    if K is None:
        K = Kx
    N = w.shape[0]
    if out is None:
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    gm = triton.cdiv(M, 32) if grid_m is None else grid_m
    _mm_bias_relu[(gm, triton.cdiv(N, 32))](
        x, w, b, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
        out.stride(0), out.stride(1), HAS_BIAS=has_bias, RELU=relu, BM=32, BN=32, BK=32)
    return out


@triton.jit
def _mm_then_epi(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, sxm, sxk, swn, swk,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + k[None, :] * sxk, mask=(rm[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(w_ptr + k[:, None] * swk + rn[None, :] * swn, mask=(k[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
    # epilogue reads the tile back transposed (other threads' stores), no barrier
    rmt = pid_m * BM + tl.arange(0, BM)
    rnt = pid_n * BN + tl.arange(0, BN)
    msk = (rnt[:, None] < N) & (rmt[None, :] < M)
    t = tl.load(out_ptr + rmt[None, :] * N + rnt[:, None], mask=msk, other=0.0)
    bias = tl.load(b_ptr + rnt, mask=rnt < N, other=0.0)
    t = tl.maximum(t + bias[:, None], 0.0)
    tl.store(out_ptr + rmt[None, :] * N + rnt[:, None], t, mask=msk)


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
        _mm_then_epi[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
            x, w, self.bias, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
            BM=32, BN=32, BK=32)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
