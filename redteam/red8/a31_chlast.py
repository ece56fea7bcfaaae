"""Naive Triton port of KernelBench level 2, problem 1: Conv2d -> ReLU -> bias add.

The convolution stays in PyTorch (cuDNN on CUDA, oneDNN on XPU): it is the one compute op this
seed delegates. The epilogue (ReLU, then the per-channel bias) is a single elementwise Triton
kernel over the flattened NCHW conv output. What a first port leaves on the table: the epilogue is
a second full pass over memory (the conv writes its output, the kernel reads it back and writes it
again), a fixed 1024-element tile, fp32 math even for bf16 data, and an integer divide per element
to recover the channel.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_bias_kernel(
    x_ptr,  # conv output, contiguous [N, C, H, W]
    bias_ptr,  # bias, [C, 1, 1] contiguous, read as [C]
    out_ptr,  # result, contiguous [N, C, H, W], same dtype as x
    n_elements,  # N * C * H * W
    n_channels,  # C
    hw,  # H * W: elements per (n, c) plane
    BLOCK_SIZE: tl.constexpr,  # elements per program
):
    # out[n, c, h, w] = max(x[n, c, h, w], 0) + bias[c]
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    channel = (offs // hw) % n_channels
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + channel, mask=mask, other=0.0).to(tl.float32)
    y = tl.maximum(x, 0.0) + bias
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    """Same constructor and parameters as the reference; the epilogue runs in Triton."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias_shape: tuple[int, ...]):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        pass
        _, channels, height, width = x.shape
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n_elements = x.numel()
        grid = (triton.cdiv(n_elements, 1024),)
        _relu_bias_kernel[grid](
            x, self.bias.contiguous(), out, n_elements, channels, height * width, BLOCK_SIZE=1024
        )
        return out


batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128
kernel_size = 3
bias_shape = (out_channels, 1, 1)


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size, bias_shape]
