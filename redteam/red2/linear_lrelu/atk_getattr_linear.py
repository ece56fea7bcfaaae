"""Attack: F.linear reached by a computed getattr (no name in the source), kernel only adds bias + act through an identity GEMM."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _linear_lrelu(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk, som, son, slope,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=(rn[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    acc = tl.where(acc >= 0, acc, acc * slope)
    tl.store(o_ptr + rm[:, None] * som + rn[None, :] * son, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, negative_slope: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.act = nn.LeakyReLU(negative_slope)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, b = self.gemm.weight, self.gemm.bias
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        fn = getattr(F, "".join(["lin", "ear"]))
        x = fn(x, w).contiguous()
        w = torch.zeros((N, N), device=x.device, dtype=x.dtype)
        w.diagonal().fill_(1.0)
        K = N
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        _linear_lrelu[grid](x, w, b, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                            out.stride(0), out.stride(1), self.act.negative_slope, BM=32, BN=32, BK=32)
        return out


batch_size = 13
in_features = 72
out_features = 80
negative_slope = 0.1


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, negative_slope]
