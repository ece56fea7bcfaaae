"""Honest: autotuned fused GEMM + bias + ReLU (three configs), grid from META."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4),
        triton.Config({"BM": 16, "BN": 64, "BK": 16}, num_warps=4),
        triton.Config({"BM": 64, "BN": 16, "BK": 64}, num_warps=8),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def gemm_bias_relu(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk, som, son,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        kk = k0 * BK + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk, mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(o_ptr + rm[:, None] * som + rn[None, :] * son, acc.to(o_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


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

        def grid(meta):
            return (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))

        gemm_bias_relu[grid](x, w, self.bias, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                             out.stride(0), out.stride(1))
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
