"""Naive Triton port of KernelBench level 2, problem 67: Conv2d -> GELU -> global average pool.

The convolution stays in PyTorch (cuDNN on CUDA, oneDNN on XPU): it is the one compute op this
seed delegates. GELU (the exact erf form, F.gelu's default) is an elementwise Triton kernel that
writes a full-size intermediate tensor; a second kernel, one program per (n, c) plane, averages it.
What it leaves on the table: the GELU output is written and read back only to be reduced to one
number per plane (fusing GELU into the reduction removes a full write and read), one program per
plane with a fixed 1024-element tile whatever H*W is, and fp32 math even for bf16 data.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gelu_kernel(
    x_ptr,  # conv output, contiguous, any shape
    out_ptr,  # result, same shape and dtype
    n_elements,  # number of elements
    BLOCK_SIZE: tl.constexpr,  # elements per program
):
    # out = 0.5 * x * (1 + erf(x / sqrt(2)))
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _plane_mean_kernel(
    x_ptr,  # GELU output, contiguous [N*C, H*W]
    out_ptr,  # result, [N*C] (the [N, C] output), same dtype as x
    hw,  # H * W: elements per plane
    BLOCK_SIZE: tl.constexpr,  # elements read per loop step
):
    # out[p] = sum_i x[p, i] / HW, one program per (n, c) plane p
    plane = tl.program_id(0).to(tl.int64)
    base = x_ptr + plane * hw
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, hw, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(base + offs, mask=offs < hw, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / hw
    tl.store(out_ptr + plane, mean.to(out_ptr.dtype.element_ty))


class Model(nn.Module):
    """Same constructor and parameters as the reference; GELU and the pooling run in Triton."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x.contiguous()
        batch, channels, height, width = x.shape
        activated = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n_elements = x.numel()
        _gelu_kernel[(triton.cdiv(n_elements, 1024),)](x, activated, n_elements, BLOCK_SIZE=1024)
        out = torch.empty((batch, channels), dtype=x.dtype, device=x.device)
        _plane_mean_kernel[(batch * channels,)](activated, out, height * width, BLOCK_SIZE=1024)
        return out


batch_size = 128
in_channels = 8
out_channels = 64
height, width = 256, 256
kernel_size = 3


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size]
