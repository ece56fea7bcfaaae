"""LayerNorm over the last dimension in one pass per row: each row is read once and written once.

What it teaches:
- A row normalization is a reduction fused with elementwise work: mean, variance, the scale by
  rsqrt(var + eps) and the affine weight and bias all happen on a row held in registers.
- Statistics in fp32 whatever the input dtype (a 16-bit row summed in 16 bits loses digits), the
  variance from the centred values (no E[x^2] - E[x]^2 cancellation), padding masked to 0.
- A block covering the whole row (next power of two of n_cols); num_warps grows with it, as the
  Triton layer-norm tutorial does (BLOCK_SIZE // 256, capped at 8), on Intel up to 16 or 32.
- int64 row offsets: rows * n_cols can pass 2**31 at large batch.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm_rows_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, stride_x, stride_out, eps,
                           BLOCK_SIZE: tl.constexpr):  # power of two >= n_cols
    # out[r, :] = (x[r, :] - mean) / sqrt(var + eps) * w + b, mean and var over the row
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = centred * tl.rsqrt(var + eps) * w + b
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def layernorm_rows(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    n_rows, n_cols = rows.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    opts = {} if x.device.type == "cpu" else {"num_warps": min(max(BLOCK_SIZE // 256, 1), 16)}
    _layernorm_rows_kernel[(n_rows,)](rows, weight, bias, out, n_cols, rows.stride(0), out.stride(0), eps,
                                      BLOCK_SIZE=BLOCK_SIZE, **opts)
    return out.reshape(x.shape)


class Model(nn.Module):
    """nn.LayerNorm over the last dimension, with its weight and bias."""

    def __init__(self, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layernorm_rows(x, self.norm.weight, self.norm.bias, self.norm.eps)


batch_size, hidden = 4096, 4096


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
