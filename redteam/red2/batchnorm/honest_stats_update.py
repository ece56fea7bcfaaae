"""Honest: training-mode BatchNorm1d: one kernel per column tile computes the batch mean/variance, normalises,
and updates running_mean/running_var (unbiased, momentum) and num_batches_tracked in place."""
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
    for r0 in range(0, M, BM):
        rows = r0 + tl.arange(0, BM)
        m = (rows[:, None] < M) & cm[None, :]
        s += tl.sum(tl.load(x_ptr + rows[:, None] * sxm + cols[None, :], mask=m, other=0.0), axis=0)
    mean = s / M
    q = tl.zeros((BC,), tl.float32)
    for r0 in range(0, M, BM):
        rows = r0 + tl.arange(0, BM)
        m = (rows[:, None] < M) & cm[None, :]
        d = tl.where(m, tl.load(x_ptr + rows[:, None] * sxm + cols[None, :], mask=m, other=0.0) - mean[None, :], 0.0)
        q += tl.sum(d * d, axis=0)
    var = q / M
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
        if not self.training:  # a training-mode kernel declines inference (docs/VERIFIER.md, rule 5f)
            raise NotImplementedError("training-mode batch norm only")
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
