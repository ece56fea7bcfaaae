"""RMSNorm over the last dimension in one pass per row (LLaMA-style: no mean, no bias).

What it teaches:
- RMSNorm is LayerNorm without the centring: y = x * rsqrt(mean(x^2) + eps) * w, one reduction per
  row, so it is memory-bound: one read of the row and one write is the whole cost.
- The sum of squares in fp32 (a bf16 or fp16 row would lose digits), the result cast back on store.
- Padding lanes masked to 0, so they add nothing to the sum; the mean divides by the true n_cols.
- int64 row offsets, and num_warps from the row length (Liger-Kernel's calculate_settings: 4 below
  2048 columns, 8 from 2048, 16 from 8192, 32 from 32768).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_rows_kernel(x_ptr, w_ptr, out_ptr, n_cols, stride_x, stride_out, eps,
                         BLOCK_SIZE: tl.constexpr):  # power of two >= n_cols
    # out[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    inv_rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_out + cols, (x * inv_rms * w).to(out_ptr.dtype.element_ty), mask=mask)


def _num_warps(block: int) -> int:
    return 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4


def rmsnorm_rows(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(rows)
    n_rows, n_cols = rows.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    opts = {} if x.device.type == "cpu" else {"num_warps": _num_warps(BLOCK_SIZE)}
    _rmsnorm_rows_kernel[(n_rows,)](rows, weight, out, n_cols, rows.stride(0), out.stride(0), eps,
                                    BLOCK_SIZE=BLOCK_SIZE, **opts)
    return out.reshape(x.shape)


class Model(nn.Module):
    """RMSNorm over the last dimension with a learned scale (torch.nn.RMSNorm)."""

    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rmsnorm_rows(x, self.norm.weight, self.norm.eps)


batch_size, hidden = 4096, 4096


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
