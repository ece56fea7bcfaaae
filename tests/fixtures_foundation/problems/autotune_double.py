"""A multi-config @triton.autotune kernel: under the bare interpreter its benchmark step fails."""

import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 16}, num_warps=1),
                          triton.Config({"BLOCK_SIZE": 64}, num_warps=2)],
                 key=["n_elements"])
@triton.jit
def _double_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):  # BLOCK_SIZE: elements per program
    # out[i] = 2 * x[i]
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, 2.0 * tl.load(x_ptr + offsets, mask=mask), mask=mask)


def double(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n_elements = x.numel()
    _double_kernel[lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)](x, out, n_elements)
    return out
