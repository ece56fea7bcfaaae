"""Honest: LayerNorm for rows of any width: a launcher class, column tiles of 32 looped twice (sum, then
centred squares) and a third pass to normalise; input of any rank viewed as rows (reshape), strides passed."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln_looped(x_ptr, w_ptr, b_ptr, o_ptr, N, sx, so, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * sx + c, mask=c < N, other=0.0)
    mean = tl.sum(acc, axis=0) / N
    sq = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        d = tl.where(c < N, tl.load(x_ptr + row * sx + c, mask=c < N, other=0.0) - mean, 0.0)
        sq += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
    for c0 in range(0, N, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        m = c < N
        x = tl.load(x_ptr + row * sx + c, mask=m, other=0.0)
        w = tl.load(w_ptr + c, mask=m, other=0.0)
        b = tl.load(b_ptr + c, mask=m, other=0.0)
        tl.store(o_ptr + row * so + c, (x - mean) * rstd * w + b, mask=m)


class RowNorm:
    """Runs _ln_looped over the rows of x (last dim normalised)."""

    block = 32

    def __call__(self, x: torch.Tensor, ln: nn.LayerNorm) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        if rows.stride(-1) != 1:
            rows = rows.contiguous()
        out = torch.empty(rows.shape, device=x.device, dtype=x.dtype)
        _ln_looped[(rows.shape[0],)](rows, ln.weight, ln.bias, out, rows.shape[1], rows.stride(0), out.stride(0),
                                     ln.eps, BLOCK=self.block)
        return out.reshape(x.shape)


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        self.run = RowNorm()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x, self.ln)


batch_size = 12
hidden = 96


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
