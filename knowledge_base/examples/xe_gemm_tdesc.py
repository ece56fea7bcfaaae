"""GEMM through tensor descriptors: 16-bit operands, fp32 accumulator (Intel Xe2 / Xe-HPC first).

What it teaches:
- `tl.make_tensor_descriptor` for both tl.dot operands and the output. On triton-xpu >= 3.6 they become
  2D block loads and stores, the fast path into DPAS (the IXB README reports > 2x over tensors of
  pointers). Block pointers are removed from triton 3.9, descriptors replace them.
- Operands stay 16-bit into tl.dot, the accumulator is fp32, and the update is `acc = tl.dot(a, b, acc)`.
- Tiles at DPAS granularity (M a multiple of 8, N of 16, K of 16 for 16-bit types).
- Launch options per device: grf_mode is an XPU keyword (CUDA rejects it); 256 registers allow at
  most 32 warps.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _matmul_tdesc_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         stride_am, stride_bk, stride_cm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,  # multiples of 8 and 16 (DPAS)
                         BLOCK_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    # C[M, N] = A[M, K] @ B[K, N]; one program per BLOCK_M x BLOCK_N tile, tiles ordered in groups of
    # GROUP_SIZE_M rows so neighbouring programs reuse the same B columns from cache.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_SIZE_M * num_pid_n)
    first_m = group * GROUP_SIZE_M
    rows_in_group = min(num_pid_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % rows_in_group)
    pid_n = (pid % (GROUP_SIZE_M * num_pid_n)) // rows_in_group

    # Last stride is the literal 1 (contiguous rows): a gate for 2D block IO.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N])

    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, k * BLOCK_K])  # out-of-bounds elements read as zero: no masks
        b = b_desc.load([k * BLOCK_K, off_n])
        acc = tl.dot(a, b, acc)  # 16-bit in, fp32 accumulate, no upcast of a or b
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def _settings(device: torch.device) -> dict:
    """Tiles and launch options for the device the tensors live on."""
    if device.type == "xpu":  # Intel's own GEMM benchmark setting for large square problems
        return dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=32, GROUP_SIZE_M=4, num_warps=32, num_stages=2,
                    grf_mode="256")
    if device.type == "cuda":
        return dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_SIZE_M=8, num_warps=8, num_stages=3)
    return dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_SIZE_M=4)  # interpreter: big tiles, few programs


def _alloc(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


def matmul_tdesc(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0], "expects A[M, K] @ B[K, N]"
    assert a.dtype == b.dtype and a.dtype in (torch.float16, torch.bfloat16), "DPAS pairs need equal 16-bit types"
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if a.device.type == "cuda":
        triton.set_allocator(_alloc)  # device-side descriptors need scratch memory on NVIDIA
    opts = _settings(a.device)
    grid = (triton.cdiv(M, opts["BLOCK_M"]) * triton.cdiv(N, opts["BLOCK_N"]),)  # tiles on axis 0
    _matmul_tdesc_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), **opts)
    return c


class Model(nn.Module):
    """C = A @ B for 16-bit A and B."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul_tdesc(A, B)


M, N, K = 2048, 2048, 2048


def get_inputs():
    return [torch.randn(M, K, dtype=torch.bfloat16), torch.randn(K, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
