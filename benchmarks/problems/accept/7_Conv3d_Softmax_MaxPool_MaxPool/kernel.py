"""Conv3d -> softmax over channels -> MaxPool3d -> MaxPool3d, all in Triton (KernelBench L2 #6).

The convolution is a direct one: each program computes a strip of output voxels for one
(sample, output channel), looping over input channels; the KSIZE^3 taps of a channel are one [voxels, taps] gather. Small @triton.jit
helpers hold the pieces (one conv tap, the channel softmax, a pooling window); the pooling kernel
is launched once per MaxPool3d. Launches pass their arguments by keyword.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_taps(x_base, w_base, od, oh, ow, sx_d, sx_h, sx_w, mask, KSIZE: tl.constexpr, BLOCK_T: tl.constexpr):
    # all KSIZE^3 taps of one input channel at once: [voxels, taps] gather times the tap weights
    t = tl.arange(0, BLOCK_T)
    kd = t // (KSIZE * KSIZE)
    kh = (t // KSIZE) % KSIZE
    kw = t % KSIZE
    tap_ok = t < KSIZE * KSIZE * KSIZE
    wv = tl.load(w_base + t, mask=tap_ok, other=0.0).to(tl.float32)
    ptrs = (x_base + (od[:, None] + kd[None, :]) * sx_d + (oh[:, None] + kh[None, :]) * sx_h
            + (ow[:, None] + kw[None, :]) * sx_w)
    xv = tl.load(ptrs, mask=mask[:, None] & tap_ok[None, :], other=0.0).to(tl.float32)
    return tl.sum(xv * wv[None, :], axis=1)


@triton.jit
def _split3(idx, B, C):
    # idx -> (a, b, c) for a row-major [*, B, C] index
    return idx // (B * C), (idx // C) % B, idx % C


@triton.jit
def _channel_softmax(tile):
    # tile: [channels, voxels]; padded channels hold -inf
    m = tl.max(tile, axis=0)
    e = tl.exp(tile - m[None, :])
    return e / tl.sum(e, axis=0)[None, :]


@triton.jit
def _window_max(base, d0, h0, w0, H, W, POOL: tl.constexpr, mask, BLOCK: tl.constexpr):
    best = tl.full((BLOCK,), float("-inf"), tl.float32)
    for i in tl.static_range(POOL):
        for j in tl.static_range(POOL):
            for k in tl.static_range(POOL):
                v = tl.load(base + ((d0 + i) * H + (h0 + j)) * W + (w0 + k), mask=mask, other=float("-inf"))
                best = tl.maximum(best, v.to(tl.float32))
    return best


@triton.jit
def conv3d_kernel(x_ptr, w_ptr, b_ptr, y_ptr,
                  C_IN, C_OUT, OD, OH, OW,
                  sx_n, sx_c, sx_d, sx_h, sx_w,
                  KSIZE: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK: tl.constexpr):
    pid_s = tl.program_id(0)
    oc = tl.program_id(1)
    n = tl.program_id(2)
    offs = pid_s * BLOCK + tl.arange(0, BLOCK)
    n_vox = OD * OH * OW
    mask = offs < n_vox
    od, oh, ow = _split3(offs, OH, OW)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ic in range(C_IN):
        x_base = x_ptr + n.to(tl.int64) * sx_n + ic * sx_c
        w_base = w_ptr + (oc * C_IN + ic) * (KSIZE * KSIZE * KSIZE)
        acc += _conv_taps(x_base, w_base, od, oh, ow, sx_d, sx_h, sx_w, mask, KSIZE, BLOCK_T)
    acc += tl.load(b_ptr + oc).to(tl.float32)
    y_base = y_ptr + (n.to(tl.int64) * C_OUT + oc) * n_vox
    tl.store(y_base + offs, acc, mask=mask)


@triton.jit
def channel_softmax_kernel(y_ptr, s_ptr, C, n_vox, BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr):
    pid_s = tl.program_id(0)
    n = tl.program_id(1)
    ch = tl.arange(0, BLOCK_C)
    vox = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    mask = (ch[:, None] < C) & (vox[None, :] < n_vox)
    offs = n.to(tl.int64) * C * n_vox + ch[:, None] * n_vox + vox[None, :]
    tile = tl.load(y_ptr + offs, mask=mask, other=float("-inf"))
    tl.store(s_ptr + offs, _channel_softmax(tile), mask=mask)


@triton.jit
def maxpool3d_kernel(in_ptr, out_ptr, D, H, W, PD, PH, PW, POOL: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    plane = tl.program_id(1)  # n * C + c
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    n_out = PD * PH * PW
    mask = offs < n_out
    pd, ph, pw = _split3(offs, PH, PW)
    base = in_ptr + plane.to(tl.int64) * D * H * W
    best = _window_max(base, pd * POOL, ph * POOL, pw * POOL, H, W, POOL, mask, BLOCK)
    tl.store(out_ptr + plane.to(tl.int64) * n_out + offs, best.to(out_ptr.dtype.element_ty), mask=mask)


def _maxpool3d(x, pool, out_dtype):
    N, C, D, H, W = x.shape
    PD, PH, PW = D // pool, H // pool, W // pool
    out = torch.empty((N, C, PD, PH, PW), device=x.device, dtype=out_dtype)
    block = 128
    maxpool3d_kernel[(triton.cdiv(PD * PH * PW, block), N * C)](
        in_ptr=x, out_ptr=out, D=D, H=H, W=W, PD=PD, PH=PH, PW=PW, POOL=pool, BLOCK=block)
    return out


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool1 = nn.MaxPool3d(pool_kernel_size)
        self.pool2 = nn.MaxPool3d(pool_kernel_size)
        self.pool = pool_kernel_size

    def forward(self, x):
        N, C_in, D, H, W = x.shape
        w = self.conv.weight.contiguous()
        C_out, ks = w.shape[0], w.shape[2]
        OD, OH, OW = D - ks + 1, H - ks + 1, W - ks + 1
        n_vox = OD * OH * OW

        y = torch.empty((N, C_out, OD, OH, OW), device=x.device, dtype=torch.float32)
        block = 128
        conv3d_kernel[(triton.cdiv(n_vox, block), C_out, N)](
            x_ptr=x, w_ptr=w, b_ptr=self.conv.bias, y_ptr=y,
            C_IN=C_in, C_OUT=C_out, OD=OD, OH=OH, OW=OW,
            sx_n=x.stride(0), sx_c=x.stride(1), sx_d=x.stride(2), sx_h=x.stride(3), sx_w=x.stride(4),
            KSIZE=ks, BLOCK_T=triton.next_power_of_2(ks * ks * ks), BLOCK=block)

        s = torch.empty_like(y)
        block_s = 128
        channel_softmax_kernel[(triton.cdiv(n_vox, block_s), N)](
            y_ptr=y, s_ptr=s, C=C_out, n_vox=n_vox,
            BLOCK_C=triton.next_power_of_2(C_out), BLOCK_S=block_s)

        p1 = _maxpool3d(s, self.pool, torch.float32)
        return _maxpool3d(p1, self.pool, x.dtype)


batch_size = 64
in_channels = 3
out_channels = 16
depth, height, width = 32, 64, 64
kernel_size = 3
pool_kernel_size = 2


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]
