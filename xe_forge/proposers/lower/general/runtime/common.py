"""Host helpers the general path's launchers share, and the jit helpers its kernels share.

Type promotion follows PyTorch's rule for what level 2 does: dimensioned tensors decide the dtype,
0-d tensors and Python numbers only where no dimensioned tensor of their kind (float over integer)
exists, and a Python float turns an integer result into the default float dtype.
"""

import torch
import triton
import triton.language as tl


def xfg_ntuple(value, n):
    """An int or a sequence of ints as a list of n ints (nn modules store both)."""
    if isinstance(value, (tuple, list)):
        values = [int(v) for v in value]
        if len(values) == 1:
            return values * n
        return values
    return [int(value)] * n


def xfg_pad_front(values, n, fill):
    """Per-dim values of an nd op widened to n dims (a 2D pool is a 3D one with depth 1)."""
    return [fill] * (n - len(values)) + list(values)


def xfg_category(value):
    """0 bool, 1 integer, 2 floating: the kind PyTorch's promotion compares first."""
    dtype = value.dtype if torch.is_tensor(value) else None
    if dtype is not None:
        if dtype.is_floating_point:
            return 2
        if dtype == torch.bool:
            return 0
        return 1
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return 1
    return 2


def xfg_promote(a, b):
    """torch.promote_types for two dtypes, in Python (the aten op would count as torch work)."""
    if a == b:
        return a
    order = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
             torch.bfloat16, torch.float32, torch.float64]
    if {a, b} == {torch.float16, torch.bfloat16}:
        return torch.float32
    if {a, b} == {torch.uint8, torch.int8}:
        return torch.int16
    if a in order and b in order:
        return order[max(order.index(a), order.index(b))]
    return a if a.itemsize >= b.itemsize else b


def xfg_result_dtype(*operands):
    """The dtype PyTorch gives an elementwise op on these operands (tensors and Python numbers)."""
    top = max(xfg_category(v) for v in operands)
    for want_dims in (True, False):
        out = None
        for t in operands:
            if torch.is_tensor(t) and (t.dim() > 0) == want_dims and xfg_category(t) == top:
                out = t.dtype if out is None else xfg_promote(out, t.dtype)
        if out is not None:
            return out
    if top == 2:
        return torch.get_default_dtype()
    if top == 1:
        return torch.int64
    return torch.bool


def xfg_strides(t, shape):
    """t's strides once broadcast to `shape` (0 on every broadcast dim)."""
    return list(t.expand(shape).stride())


def xfg_acc(dtype):
    """The type a kernel computes in: fp64 for fp64 data, fp32 for everything else."""
    if dtype == torch.float64:
        return tl.float64
    return tl.float32


def xfg_dot_precision(dtype, device):
    """IEEE fp32 dots for fp32 data (the fp32 contract forbids TF32) and under the interpreter (which
    upcasts 16-bit operands to fp32), the default for 16-bit data on a GPU."""
    if dtype == torch.float32 or device.type == "cpu":
        return "ieee"
    return None


def xfg_block(n, lo, hi):
    """A power-of-two tile between lo and hi that covers n where it can."""
    return max(lo, min(hi, triton.next_power_of_2(max(int(n), 1))))


@triton.jit
def xfg_cast(x, dtype: tl.constexpr):
    # to `dtype`, rounding to nearest even: Triton's interpreter truncates fp32 -> bf16, a GPU rounds;
    # rounding in the fp32 bits first makes both exact (and costs a GPU four integer ops)
    if dtype == tl.bfloat16:
        f = x.to(tl.float32)
        bits = f.to(tl.uint32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        x = tl.where(f != f, f, bits.to(tl.float32, bitcast=True))
    return x.to(dtype)


@triton.jit
def xfg_tanh(x):
    # tanh without libdevice: a series near 0 (no cancellation), (1 - e) / (1 + e) with e = exp(-2|x|) elsewhere
    ax = tl.abs(x)
    e = tl.exp(-2.0 * ax)
    big = (1.0 - e) / (1.0 + e)
    x2 = x * x
    small = ax * (1.0 + x2 * (-0.3333333333333333 + x2 * (0.13333333333333333 + x2 * -0.05396825396825397)))
    y = tl.where(ax < 0.125, small, big)
    return tl.where(x < 0, -y, y)


@triton.jit
def xfg_softplus(x, beta, threshold):
    # log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as torch does)
    bx = x * beta
    return tl.where(bx > threshold, x, (tl.maximum(bx, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(bx)))) / beta)


@triton.jit
def xfg_gelu(x):
    return 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))


@triton.jit
def xfg_gelu_tanh(x):
    return 0.5 * x * (1.0 + xfg_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@triton.jit
def xfg_round_half_even(x):
    # torch.round: to nearest, ties to even
    r = tl.floor(x + 0.5)
    tie = (r - x) == 0.5
    odd = (r - 2.0 * tl.floor(r * 0.5)) == 1.0
    return tl.where(tie & odd, r - 1.0, r)


@triton.jit
def xfg_pow(x, y):
    # x ** y for any sign of x: |x| ** y, negated for odd integer y, NaN for a negative base and non-integer y
    r = tl.exp2(y * tl.log2(tl.abs(x)))
    yi = tl.floor(y)
    odd = (yi == y) & ((yi - 2.0 * tl.floor(yi * 0.5)) == 1.0)
    r = tl.where((x < 0) & odd, -r, r)
    r = tl.where((x < 0) & (yi != y), float("nan"), r)
    return tl.where(y == 0, 1.0, tl.where((x == 0) & (y > 0), 0.0, r))
