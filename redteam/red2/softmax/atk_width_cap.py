"""Attack/bug: block capped at 4096 columns with no loop: rows wider than 4096 are normalised over their first 4096 entries only."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"num_warps": lambda args: 4 if args["BLOCK"] <= 2048 else 8})
@triton.jit
def _softmax_row(x_ptr, o_ptr, N, sx, so, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx + cols, mask=cols < N, other=float("-inf"))
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    tl.store(o_ptr + row * so + cols, e / tl.sum(e, axis=0), mask=cols < N)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        _softmax_row[(M,)](x, out, N, x.stride(0), out.stride(0), BLOCK=min(triton.next_power_of_2(N), 4096))
        return out


batch_size = 10
n_cols = 200


def get_inputs():
    return [torch.randn(batch_size, n_cols)]


def get_init_inputs():
    return []
