"""Honest: a launcher class owns tiles and grid; @triton.heuristics sets EVEN_K to drop the K mask when K % BK == 0."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda a: a["K"] % a["BK"] == 0})
@triton.jit
def _linear_lrelu(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk, som, son, slope,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        if EVEN_K:
            a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=rm[:, None] < M, other=0.0)
            b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=rn[None, :] < N, other=0.0)
        else:
            a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=(rn[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    acc = tl.where(acc >= 0, acc, acc * slope)
    tl.store(o_ptr + rm[:, None] * som + rn[None, :] * son, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class LinearAct:
    """Launches the fused kernel for one (x, w, b) with fixed tiles."""

    def __init__(self, bm: int = 32, bn: int = 32, bk: int = 16):
        self.bm, self.bn, self.bk = bm, bn, bk

    def __call__(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, slope: float) -> torch.Tensor:
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, self.bm), triton.cdiv(N, self.bn))
        _linear_lrelu[grid](x, w, b, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                            out.stride(0), out.stride(1), slope, BM=self.bm, BN=self.bn, BK=self.bk)
        return out


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, negative_slope: float):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.act = nn.LeakyReLU(negative_slope)
        self.launch = LinearAct()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.launch(x, self.gemm.weight, self.gemm.bias, self.act.negative_slope)


batch_size = 13
in_features = 72
out_features = 80
negative_slope = 0.1


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, negative_slope]
