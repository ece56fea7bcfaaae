"""Attack/bug: no eps at all (0/0 on a constant row)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _ln_fwd(x_ptr, w_ptr, b_ptr, o_ptr, N, sx, so, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * sx + cols, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(m, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / N
    rstd = 1.0 / tl.sqrt(var)
    w = tl.load(w_ptr + cols, mask=m, other=0.0)
    b = tl.load(b_ptr + cols, mask=m, other=0.0)
    tl.store(o_ptr + row * so + cols, d * rstd * w + b, mask=m)


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        M, N = x2.shape
        out = torch.empty_like(x2)
        _ln_fwd[(M,)](x2, self.ln.weight, self.ln.bias, out, N, x2.stride(0), out.stride(0), self.ln.eps,
                      BLOCK=triton.next_power_of_2(N))
        return out.reshape(x.shape)


batch_size = 12
hidden = 96


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
