"""Persistent GEMM: as many programs as the device has cores, each looping over output tiles.

What it teaches:
- The program count comes from the device: Xe-cores on Intel (torch.xpu `gpu_subslice_count`, as
  Intel's stream-K benchmark uses), SMs on NVIDIA (`multi_processor_count`); a constant on the CPU.
  Launch overhead and tail effects shrink when each program processes several tiles.
- The tile loop strides by the program count with `tl.range`, and keeps the grouped (GROUP_SIZE_M)
  tile order so the programs running together share operands in cache.
- An fp32 accumulator per tile, reset for every tile; the dtype of the output follows the input.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

CPU_PROGRAMS = 4  # the interpreter runs programs one at a time; a few are enough to exercise the loop


def device_program_count(device: torch.device) -> int:
    """Cores that can each hold one persistent program: Xe-cores, SMs, or a constant on the CPU."""
    if device.type == "xpu":
        props = torch.xpu.get_device_properties(device)
        return int(getattr(props, "gpu_subslice_count", 0) or props.max_compute_units // 8)
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return CPU_PROGRAMS


@triton.jit
def _matmul_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                              NUM_PROGRAMS: tl.constexpr,  # programs launched (grid size)
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                              GROUP_SIZE_M: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    # C = A @ B; program p computes tiles p, p + NUM_PROGRAMS, p + 2 * NUM_PROGRAMS, ...
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = num_pid_m * num_pid_n
    tiles_per_group = GROUP_SIZE_M * num_pid_n
    offs_k = tl.arange(0, BLOCK_K)
    for tile in tl.range(tl.program_id(0), num_tiles, NUM_PROGRAMS):
        first_m = (tile // tiles_per_group) * GROUP_SIZE_M
        group_rows = min(num_pid_m - first_m, GROUP_SIZE_M)
        pid_m = first_m + (tile % tiles_per_group) % group_rows
        pid_n = (tile % tiles_per_group) // group_rows
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :]
        b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K * stride_bk
        c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :]
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_persistent(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0], "expects A[M, K] @ B[K, N]"
    assert a.dtype == b.dtype, "tl.dot needs both operands in one dtype"
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if a.device.type == "xpu":
        opts = dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=32, GROUP_SIZE_M=4, num_warps=32, num_stages=2,
                    grf_mode="256")
    elif a.device.type == "cuda":
        opts = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_SIZE_M=8, num_warps=8, num_stages=3)
    else:
        opts = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=64, GROUP_SIZE_M=2)
    num_tiles = triton.cdiv(M, opts["BLOCK_M"]) * triton.cdiv(N, opts["BLOCK_N"])
    programs = max(1, min(device_program_count(a.device), num_tiles))
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    _matmul_persistent_kernel[(programs,)](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                                           NUM_PROGRAMS=programs, INPUT_PRECISION=precision, **opts)
    return c


class Model(nn.Module):
    """C = A @ B with a persistent kernel."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul_persistent(A, B)


M, N, K = 4096, 4096, 4096


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []
