"""HONEST h04 (76): GEMM through host-built tensor descriptors (out-of-bounds tiles read as zero)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _mm_desc(x_desc, w_desc, bias_ptr, out_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = x_desc.load([pm * BM, k0])
        b = w_desc.load([pn * BN, k0])
        acc += tl.dot(a, tl.trans(b), input_precision="ieee")
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    bias = tl.load(bias_ptr + on, mask=on < N, other=0.0)
    y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(out_ptr + om[:, None] * N + on[None, :], y, mask=(om[:, None] < M) & (on[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = x.contiguous()
        w = self.gemm.weight.contiguous()
        M, K = x.shape
        N = w.shape[0]
        bm, bn, bk = 16, 32, 16
        x_desc = TensorDescriptor.from_tensor(x, [bm, bk])
        w_desc = TensorDescriptor.from_tensor(w, [bn, bk])
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _mm_desc[(triton.cdiv(M, bm), triton.cdiv(N, bn))](x_desc, w_desc, self.bias, out, M, N, K, BM=bm, BN=bn, BK=bk)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
