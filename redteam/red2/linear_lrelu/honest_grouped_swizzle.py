"""Honest: GEMM + bias + LeakyReLU on a 1-D grid swizzled into groups of GROUP_M row tiles (the Triton matmul
tutorial's L2 ordering), pointer blocks advanced by BK each step, tl.multiple_of/max_contiguous hints."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gemm_bp(x_ptr, w_ptr, b_ptr, o_ptr, M, N, K, sxm, sxk, swn, swk, som, son, slope,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn0 = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = x_ptr + rm[:, None] * sxm + rk[None, :] * sxk
    b_ptrs = w_ptr + rn0[None, :] * swn + rk[:, None] * swk
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rn0[None, :] < N) & (rk[:, None] + k0 < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
        a_ptrs += BK * sxk
        b_ptrs += BK * swk
    rn = pid_n * BN + tl.arange(0, BN)
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
        bm, bn, bk = 16, 32, 32
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        _gemm_bp[grid](x, w, b, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                       out.stride(0), out.stride(1), self.act.negative_slope, BM=bm, BN=bn, BK=bk, GROUP_M=4)
        return out


batch_size = 13
in_features = 72
out_features = 80
negative_slope = 0.1


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, negative_slope]
