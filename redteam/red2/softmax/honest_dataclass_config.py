"""Honest: a frozen dataclass for launch settings chosen by an lru_cache'd function of the row width,
rows of any rank flattened with math.prod, a warning for empty inputs, softmax in one block per row."""
import math
import warnings
from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn as nn
import triton
import triton.language as tl


@dataclass(frozen=True)
class Launch:
    block: int
    num_warps: int


@lru_cache(maxsize=64)
def pick(n: int) -> Launch:
    block = triton.next_power_of_2(n)
    return Launch(block=block, num_warps=4 if block <= 1024 else 8)


@triton.jit
def _softmax_kernel(x_ptr, o_ptr, N, sx, so, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx + cols, mask=cols < N, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(o_ptr + row * so + cols, e / tl.sum(e, axis=0), mask=cols < N)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        rows = math.prod(x.shape[:-1])
        if rows == 0:
            warnings.warn("empty input")
            return torch.empty_like(x)
        x2 = x.reshape(rows, n).contiguous()
        out = torch.empty_like(x2)
        cfg = pick(n)
        _softmax_kernel[(rows,)](x2, out, n, x2.stride(0), out.stride(0), BLOCK=cfg.block, num_warps=cfg.num_warps)
        return out.reshape(x.shape)


batch_size = 10
n_cols = 200


def get_inputs():
    return [torch.randn(batch_size, n_cols)]


def get_init_inputs():
    return []
