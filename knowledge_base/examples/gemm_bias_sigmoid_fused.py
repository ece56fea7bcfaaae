"""Linear + bias + sigmoid + scale in one kernel, weight packed once (KernelBench level-2 shape).

What it teaches:
- Fusion: the epilogue (bias, sigmoid, scale) runs on the fp32 accumulator in registers, so the GEMM
  output is written once instead of being re-read by three elementwise kernels.
- Sigmoid through exp2: 1 / (1 + 2^(-x * log2(e))), cheaper than tl.exp on Intel and NVIDIA alike.
- Weight pre-packing: nn.Linear keeps W as [N, K]; the kernel wants K-major B = W^T [K, N] contiguous.
  It is packed once and re-packed only when the parameter changes (data pointer or version), never
  with `.t().contiguous()` on every forward.
- Precision contract: fp32 operands with `input_precision="ieee"`, since a float32 tl.dot defaults to
  TF32 and would miss a 1e-4 fp32 tolerance. (With a bf16 contract, cast once and drop "ieee".)
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _linear_sigmoid_scale_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, M, N, K, scale,
                                 stride_xm, stride_wk, stride_om,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[m, n] = sigmoid(sum_k x[m, k] * w[k, n] + bias[n]) * scale
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_k[:, None].to(tl.int64) * stride_wk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc, input_precision="ieee")
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K * stride_wk
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    z = acc + bias[None, :]
    y = scale / (1.0 + tl.exp2(-z * 1.4426950408889634))  # sigmoid(z) * scale via exp2
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out_ptr + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :], y, mask=mask)


class Model(nn.Module):
    """y = sigmoid(x @ W^T + b) * scale, with W and b named like nn.Linear's so weights copy by name."""

    def __init__(self, in_features: int, out_features: int, scale: float) -> None:
        super().__init__()
        ref = nn.Linear(in_features, out_features)
        self.weight = nn.Parameter(ref.weight.detach().clone())
        self.bias = nn.Parameter(ref.bias.detach().clone())
        self.scale = float(scale)
        self._packed_key = None
        self._packed = None

    def _packed_weight(self) -> torch.Tensor:
        """W^T as a contiguous [K, N] tensor, rebuilt only when the parameter changed."""
        key = (self.weight.data_ptr(), self.weight._version, self.weight.device)
        if key != self._packed_key:
            self._packed = self.weight.detach().t().contiguous()
            self._packed_key = key
        return self._packed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.ndim == 2 and x.shape[1] == self.weight.shape[1], "x must be [batch, in_features]"
        x = x.contiguous()
        w = self._packed_weight()
        M, K = x.shape
        N = w.shape[1]
        out = torch.empty((M, N), device=x.device, dtype=torch.float32)
        if x.device.type == "cpu":  # interpreter: large tiles, few programs
            BLOCK_M, BLOCK_N, BLOCK_K, opts = 64, 64, 64, {}
        else:
            BLOCK_M, BLOCK_N, BLOCK_K, opts = 128, 128, 32, {"num_warps": 8}
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        _linear_sigmoid_scale_kernel[grid](x, w, self.bias, out, M, N, K, self.scale,
                                           x.stride(0), w.stride(0), out.stride(0),
                                           BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, **opts)
        return out


batch_size, in_features, out_features, scale = 128, 1024, 512, 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
