"""Portable replacements for what Inductor's kernels import from torch._inductor at run time.

Inductor kernels call `triton_helpers.*` (NaN-propagating min/max, Welford, online softmax...) and
`libdevice.*` (CUDA's math library, which Triton's interpreter does not implement). A packaged
module may not import torch._inductor and must run on any Triton backend and under the interpreter,
so each call is mapped to `tl` where Triton has the function, or to a small @triton.jit helper
defined here and copied into the packaged module (only the ones it uses).
"""

from __future__ import annotations

# libdevice / tl_math names Triton's language has under the same meaning.
TL_NATIVE = {
    "exp": "tl.exp", "exp2": "tl.exp2", "log": "tl.log", "log2": "tl.log2", "sqrt": "tl.sqrt",
    "rsqrt": "tl.rsqrt", "erf": "tl.erf", "abs": "tl.abs", "floor": "tl.floor", "ceil": "tl.ceil",
    "sin": "tl.sin", "cos": "tl.cos", "fma": "tl.fma", "sigmoid": "tl.sigmoid", "fabs": "tl.abs",
    "sqrt_rn": "tl.sqrt_rn", "div_rn": "tl.div_rn", "floorf": "tl.floor",
}

# name -> (source, helpers it calls). Names are prefixed so they cannot clash with kernel names.
HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "promote_to_tensor": ('''
@triton.jit
def _xf_promote_to_tensor(x):
    # adding a 1-element tensor turns a scalar into a tensor without changing its value or dtype
    return x + tl.zeros((1,), tl.int1)
''', ()),
    "maximum": ('''
@triton.jit
def _xf_maximum(a, b):
    # torch.maximum semantics: a NaN on either side wins
    mask = a > b
    if _xf_promote_to_tensor(a).dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)
''', ("promote_to_tensor",)),
    "minimum": ('''
@triton.jit
def _xf_minimum(a, b):
    mask = a < b
    if _xf_promote_to_tensor(a).dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)
''', ("promote_to_tensor",)),
    "max2": ('''
@triton.jit
def _xf_max2(a, dim):
    return tl.reduce(a, dim, _xf_maximum)
''', ("maximum",)),
    "min2": ('''
@triton.jit
def _xf_min2(a, dim):
    return tl.reduce(a, dim, _xf_minimum)
''', ("minimum",)),
    "div_floor_integer": ('''
@triton.jit
def _xf_div_floor_integer(a, b):
    # Python's floor division on integers (Triton's // truncates toward zero like C)
    quot = a // b
    fixed = tl.where((a % b) != 0, quot - 1, quot)
    return tl.where((a < 0) != (b < 0), fixed, quot)
''', ()),
    "remainder_integer": ('''
@triton.jit
def _xf_remainder_integer(a, b):
    # Python's modulo: the result takes the divisor's sign
    rem = a % b
    return tl.where((rem != 0) & ((a < 0) != (b < 0)), rem + b, rem)
''', ()),
    "welford_reduce": ('''
@triton.jit
def _xf_welford_reduce(value, mean, m2, weight, first_iteration):
    # one Welford step per lane: running mean and sum of squared deviations
    if first_iteration:
        new_weight = tl.full(weight.shape, 1, weight.dtype)
        new_mean = value
        new_m2 = tl.zeros_like(m2)
    else:
        delta = value - mean
        new_weight = weight + 1
        new_mean = mean + delta / new_weight
        new_m2 = m2 + delta * (value - new_mean)
    return new_mean, new_m2, new_weight
''', ()),
    "welford_combine": ('''
@triton.jit
def _xf_welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    # Chan et al.: merge two (mean, M2, count) triples; equal means give delta 0 (inf - inf safe)
    delta = tl.where(mean_1 == mean_2, 0.0, mean_2 - mean_1)
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight
''', ()),
    "welford": ('''
@triton.jit
def _xf_welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, _xf_welford_combine)
''', ("welford_combine",)),
    "exp": ('''
@triton.jit
def _xf_exp(x, use_fast_math: tl.constexpr):
    return tl.exp(x)
''', ()),
    "online_softmax_reduce": ('''
@triton.jit
def _xf_online_softmax_reduce(lhs_max, lhs_sum, dim, use_fast_math: tl.constexpr):
    # merge per-lane (max, sum of exp(x - max)) pairs along dim
    out_max = _xf_max2(lhs_max, dim)
    out_max_keepdim = tl.expand_dims(out_max, dim)
    delta = tl.where(out_max_keepdim == float("-inf"), 0, lhs_max - out_max_keepdim)
    return out_max, tl.sum(lhs_sum * tl.exp(delta), dim)
''', ("max2",)),
    "online_softmax_combine": ('''
@triton.jit
def _xf_online_softmax_combine(lhs_max, lhs_sum, rhs_max, use_fast_math: tl.constexpr):
    # accumulator (max, sum) meets one new value per lane (its own sum is exp(0) = 1)
    out_max = _xf_maximum(lhs_max, rhs_max)
    lhs_scale = tl.where(out_max == float("-inf"), 1.0, tl.exp(lhs_max - out_max))
    rhs_scale = tl.where(out_max == float("-inf"), 1.0, tl.exp(rhs_max - out_max))
    return out_max, lhs_sum * lhs_scale + rhs_scale
''', ("maximum",)),
    "any": ('''
@triton.jit
def _xf_any_combine(a, b):
    return a | b


@triton.jit
def _xf_any(a, dim):
    return tl.reduce(a, dim, _xf_any_combine)
''', ()),
    "prod": ('''
@triton.jit
def _xf_prod_combine(a, b):
    return a * b


@triton.jit
def _xf_prod(a, dim):
    return tl.reduce(a, dim, _xf_prod_combine)
''', ()),
    "maximum_with_index": ('''
@triton.jit
def _xf_maximum_with_index(a_value, a_index, b_value, b_index):
    # argmax combine: larger value wins, NaN wins, ties go to the lower index
    mask = a_value > b_value
    equal = a_value == b_value
    if _xf_promote_to_tensor(a_value).dtype.is_floating():
        a_nan = a_value != a_value
        b_nan = b_value != b_value
        mask |= a_nan & ~b_nan
        equal |= a_nan & b_nan
    mask |= equal & (a_index < b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)
''', ("promote_to_tensor",)),
    "minimum_with_index": ('''
@triton.jit
def _xf_minimum_with_index(a_value, a_index, b_value, b_index):
    mask = a_value < b_value
    equal = a_value == b_value
    if _xf_promote_to_tensor(a_value).dtype.is_floating():
        a_nan = a_value != a_value
        b_nan = b_value != b_value
        mask |= a_nan & ~b_nan
        equal |= a_nan & b_nan
    mask |= equal & (a_index < b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)
''', ("promote_to_tensor",)),
    "max_with_index": ('''
@triton.jit
def _xf_max_with_index(value, index, dim):
    return tl.reduce((value, index), dim, _xf_maximum_with_index)
''', ("maximum_with_index",)),
    "min_with_index": ('''
@triton.jit
def _xf_min_with_index(value, index, dim):
    return tl.reduce((value, index), dim, _xf_minimum_with_index)
''', ("minimum_with_index",)),
    # libdevice functions Triton's language lacks, in fp32 (callers upcast as Inductor does)
    "tanh": ('''
@triton.jit
def _xf_tanh(x):
    # tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|): no overflow for large |x|
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x < 0, -t, t)
''', ()),
    "log1p": ('''
@triton.jit
def _xf_log1p(x):
    # log(1 + x) without losing x when |x| is tiny: log(u) * x / (u - 1) with u = 1 + x
    u = 1.0 + x
    d = u - 1.0
    small = tl.log(u) * (x / tl.where(d == 0.0, 1.0, d))
    return tl.where(d == 0.0, x, tl.where(tl.abs(x) > 0.5, tl.log(u), small))
''', ()),
    "expm1": ('''
@triton.jit
def _xf_expm1(x):
    # exp(x) - 1 for tiny |x| via the (u - 1) * x / log(u) correction, u = exp(x)
    u = tl.exp(x)
    lu = tl.log(u)
    small = (u == 1.0) | (lu == 0.0)
    big = tl.abs(x) > 0.5
    return tl.where(small, x, tl.where(big, u - 1.0, (u - 1.0) * (x / tl.where(small, 1.0, lu))))
''', ()),
    "pow": ('''
@triton.jit
def _xf_pow(x, y):
    # float power through exp/log, with the sign of a negative base for integral exponents
    ax = tl.abs(x)
    r = tl.exp(y * tl.log(ax))
    yi = tl.floor(y)
    odd = (yi == y) & ((yi - 2.0 * tl.floor(yi * 0.5)) == 1.0)
    r = tl.where((x < 0) & odd, -r, r)
    r = tl.where((x < 0) & (yi != y), float("nan"), r)
    r = tl.where(y == 0.0, 1.0, r)
    return tl.where((ax == 0.0) & (y > 0), 0.0, r)
''', ()),
    "isnan": ('''
@triton.jit
def _xf_isnan(x):
    return x != x
''', ()),
    "isinf": ('''
@triton.jit
def _xf_isinf(x):
    return tl.abs(x) == float("inf")
''', ()),
    "signbit": ('''
@triton.jit
def _xf_signbit(x):
    return (x < 0) | ((x == 0) & ((1.0 / x) < 0))
''', ()),
    "trunc": ('''
@triton.jit
def _xf_trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))
''', ()),
    "nearbyint": ('''
@triton.jit
def _xf_nearbyint(x):
    # round half to even, like torch.round
    f = tl.floor(x)
    diff = x - f
    even = (f - 2.0 * tl.floor(f * 0.5)) == 0.0
    up = (diff > 0.5) | ((diff == 0.5) & ~even)
    return tl.where(up, f + 1.0, f)
''', ()),
}

# libdevice names served by a helper above (rint rounds like nearbyint).
LIBDEVICE_HELPERS = {"tanh": "tanh", "log1p": "log1p", "expm1": "expm1", "pow": "pow", "isnan": "isnan",
                     "isinf": "isinf", "signbit": "signbit", "trunc": "trunc", "nearbyint": "nearbyint",
                     "rint": "nearbyint", "round": "nearbyint"}

# triton_helpers functions that have no meaning in a packaged module (driver selection).
DROPPED_STATEMENTS = {"set_driver_to_gpu", "set_driver_to_cpu"}


def helper_name(name: str) -> str:
    return f"_xf_{name}"


def helper_sources(names: set[str]) -> str:
    """The sources of the named helpers and everything they call, each once, callees first."""
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered:
            return
        for dep in HELPERS[name][1]:
            visit(dep)
        ordered.append(name)

    for name in sorted(names):
        visit(name)
    return "\n".join(HELPERS[n][0].strip("\n") + "\n\n" for n in ordered)
