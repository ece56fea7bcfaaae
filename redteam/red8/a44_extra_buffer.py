"""Attack: the state dict differs from the reference's (an extra persistent buffer `out_scale`, read by the
kernel): a user's checkpoint of the reference model no longer loads (strict load_state_dict raises), and a
checkpoint saved from this model carries a key the reference does not know."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, w_ptr, b_ptr, s_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk,
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
    acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :], 0.0) * tl.load(s_ptr)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.register_buffer("out_scale", torch.ones(1))

    def forward(self, x):
        w = self.gemm.weight
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _k[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, w, self.bias, self.out_scale, out, M, N, K,
                                                      x.stride(0), x.stride(1), w.stride(0), w.stride(1),
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
