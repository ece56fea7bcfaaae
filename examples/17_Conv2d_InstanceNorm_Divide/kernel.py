"""Naive Triton port of KernelBench level 2, problem 17: Conv2d -> InstanceNorm2d -> divide.

The convolution stays in PyTorch (cuDNN on CUDA, oneDNN on XPU): it is the one compute op this
seed delegates. Instance norm (affine=False, eps from the module, biased variance over each
(n, c) plane) and the division run in two Triton kernels: one program per plane computes the mean
and 1/std in two passes over the plane, then an elementwise kernel normalizes and divides. What
it leaves on the table: the conv output is read three times (two statistics passes, one
normalize pass) plus written twice, the statistics use one program per plane with a fixed
1024-element tile regardless of H*W, the division is a true divide per element instead of folding
1/divide_by into 1/std, and fp32 math even for bf16 data.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _plane_stats_kernel(
    x_ptr,  # conv output, contiguous [N*C, H*W]
    mean_ptr,  # fp32 [N*C] out: mean of each plane
    rstd_ptr,  # fp32 [N*C] out: 1 / sqrt(biased variance + eps) of each plane
    hw,  # H * W: elements per plane
    eps,  # instance norm epsilon
    BLOCK_SIZE: tl.constexpr,  # elements read per loop step
):
    # mean[p] = sum_i x[p, i] / HW;  rstd[p] = 1 / sqrt(sum_i (x[p, i] - mean[p])^2 / HW + eps)
    plane = tl.program_id(0).to(tl.int64)
    base = x_ptr + plane * hw
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, hw, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(base + offs, mask=offs < hw, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / hw
    # second pass around the mean: no cancellation, unlike E[x^2] - E[x]^2
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, hw, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < hw
        x = tl.load(base + offs, mask=mask, other=0.0).to(tl.float32)
        diff = tl.where(mask, x - mean, 0.0)
        acc += diff * diff
    var = tl.sum(acc, axis=0) / hw
    tl.store(mean_ptr + plane, mean)
    tl.store(rstd_ptr + plane, 1.0 / tl.sqrt(var + eps))


@triton.jit
def _normalize_divide_kernel(
    x_ptr,  # conv output, contiguous [N*C, H*W]
    mean_ptr,  # fp32 [N*C]
    rstd_ptr,  # fp32 [N*C]
    out_ptr,  # result, contiguous [N*C, H*W], same dtype as x
    n_elements,  # N * C * H * W
    hw,  # H * W
    divide_by,  # the model's divisor
    BLOCK_SIZE: tl.constexpr,  # elements per program
):
    # out[p, i] = (x[p, i] - mean[p]) * rstd[p] / divide_by
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    plane = offs // hw
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + plane, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + plane, mask=mask, other=0.0)
    y = (x - mean) * rstd / divide_by
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    """Same constructor and modules as the reference; the norm and the division run in Triton."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, divide_by: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x.contiguous()
        batch, channels, height, width = x.shape
        n_planes = batch * channels
        hw = height * width
        mean = torch.empty(n_planes, dtype=torch.float32, device=x.device)
        rstd = torch.empty(n_planes, dtype=torch.float32, device=x.device)
        _plane_stats_kernel[(n_planes,)](x, mean, rstd, hw, self.instance_norm.eps, BLOCK_SIZE=1024)
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n_elements = x.numel()
        grid = (triton.cdiv(n_elements, 1024),)
        _normalize_divide_kernel[grid](
            x, mean, rstd, out, n_elements, hw, float(self.divide_by), BLOCK_SIZE=1024
        )
        return out


batch_size = 128
in_channels = 64
out_channels = 128
height = width = 128
kernel_size = 3
divide_by = 2.0


def get_inputs() -> list[torch.Tensor]:
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs() -> list:
    return [in_channels, out_channels, kernel_size, divide_by]
