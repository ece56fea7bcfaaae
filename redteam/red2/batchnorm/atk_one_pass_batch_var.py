"""Attack/bug: one-pass batch variance E[x^2] - E[x]^2 over the batch dim (cancels far from zero); the wide
trial's hard rows are calm along the last dim only, so columns never are."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bn_train(x_ptr, w_ptr, b_ptr, rm_ptr, rv_ptr, nbt_ptr, o_ptr, M, C, sxm, som, eps, momentum,
              BM: tl.constexpr, BC: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BC + tl.arange(0, BC)
    cm = cols < C
    s = tl.zeros((BC,), tl.float32)
    q = tl.zeros((BC,), tl.float32)
    for r0 in range(0, M, BM):
        rows = r0 + tl.arange(0, BM)
        m = (rows[:, None] < M) & cm[None, :]
        xv = tl.load(x_ptr + rows[:, None] * sxm + cols[None, :], mask=m, other=0.0)
        s += tl.sum(xv, axis=0)
        q += tl.sum(xv * xv, axis=0)
    mean = s / M
    var = q / M - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=cm, other=0.0)
    b = tl.load(b_ptr + cols, mask=cm, other=0.0)
    for r0 in range(0, M, BM):
        rows = r0 + tl.arange(0, BM)
        m = (rows[:, None] < M) & cm[None, :]
        xv = tl.load(x_ptr + rows[:, None] * sxm + cols[None, :], mask=m, other=0.0)
        tl.store(o_ptr + rows[:, None] * som + cols[None, :], (xv - mean[None, :]) * (rstd * w)[None, :] + b[None, :], mask=m)
    rmean = tl.load(rm_ptr + cols, mask=cm, other=0.0)
    rvar = tl.load(rv_ptr + cols, mask=cm, other=0.0)
    tl.store(rm_ptr + cols, (1 - momentum) * rmean + momentum * mean, mask=cm)
    tl.store(rv_ptr + cols, (1 - momentum) * rvar + momentum * var * M / (M - 1), mask=cm)
    if pid == 0:
        tl.store(nbt_ptr, tl.load(nbt_ptr) + 1)


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, C = x.shape
        out = torch.empty_like(x)
        bn = self.bn
        _bn_train[(triton.cdiv(C, 16),)](x, bn.weight, bn.bias, bn.running_mean, bn.running_var,
                                        bn.num_batches_tracked, out, M, C, x.stride(0), out.stride(0),
                                        bn.eps, bn.momentum, BM=16, BC=16)
        return out


batch_size = 16
features = 24


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
