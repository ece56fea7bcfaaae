"""Honest: device-side tensor descriptors (tl.make_tensor_descriptor) over row-padded copies (16-byte
aligned row strides), GEMM + bias + ReLU fused."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


def _alloc(size, alignment, stream):
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.empty(size, device=dev, dtype=torch.int8)


triton.set_allocator(_alloc)


@triton.jit
def _k(x_ptr, w_ptr, b_ptr, o_ptr, M, N, Kp, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, Kp], strides=[Kp, 1], block_shape=[BM, BK])
    wd = tl.make_tensor_descriptor(w_ptr, shape=[N, Kp], strides=[Kp, 1], block_shape=[BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, Kp, BK):
        a = xd.load([pm * BM, k0])
        b = wd.load([pn * BN, k0])
        acc += tl.dot(a, tl.trans(b), input_precision="ieee")
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.maximum(acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :], 0.0)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        w = self.gemm.weight
        M, K = x.shape
        N = w.shape[0]
        Kp = triton.cdiv(K, 4) * 4
        xp = F.pad(x, (0, Kp - K)).contiguous()
        wp = F.pad(w, (0, Kp - K)).contiguous()
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        _k[(triton.cdiv(M, 32), triton.cdiv(N, 32))](xp, wp, self.bias, out, M, N, Kp, BM=32, BN=32, BK=32)
        return out


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
