"""The portable helpers that replace Inductor's triton_helpers/libdevice agree with torch.

Each runs in a tiny generated kernel under the interpreter on inputs that reach the edge cases
(tiny |x| for log1p/expm1, large |x| for tanh, halves for rounding, NaN for min/max, negative
integers for floor division).
"""

from __future__ import annotations

import importlib.util
import math

import pytest
import torch

from xe_forge.proposers.lower.helpers import HELPERS, LIBDEVICE_HELPERS, helper_sources

UNARY = {"tanh": torch.tanh, "log1p": torch.log1p, "expm1": torch.expm1, "trunc": torch.trunc,
         "nearbyint": torch.round, "isnan": torch.isnan, "isinf": torch.isinf, "signbit": torch.signbit}
BINARY = {"maximum": torch.maximum, "minimum": torch.minimum, "pow": torch.pow}
INTEGER = {"div_floor_integer": lambda a, b: torch.div(a, b, rounding_mode="floor"),
           "remainder_integer": torch.remainder}

UNARY_KERNEL = '''

@triton.jit
def unary_{name}(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(y_ptr + offs, _xf_{name}(x), mask=mask)
'''
BINARY_KERNEL = '''

@triton.jit
def binary_{name}(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    tl.store(y_ptr + offs, _xf_{name}(a, b), mask=mask)
'''
REDUCE_KERNEL = '''

@triton.jit
def welford_rows(x_ptr, mean_ptr, m2_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    # two-level Welford as Inductor's looped reductions do it: per-lane steps, then a tree combine
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mean = tl.zeros([BLOCK], tl.float32)
    m2 = tl.zeros([BLOCK], tl.float32)
    weight = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + start + offs)
        mean, m2, weight = _xf_welford_reduce(x, mean, m2, weight, start == 0)
    m, v, w = _xf_welford(mean, m2, weight, 0)
    tl.store(mean_ptr + row, m)
    tl.store(m2_ptr + row, v)


@triton.jit
def rowmax(x_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(y_ptr + row, _xf_max2(x, 0))
'''


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_INTERPRET", "1")
        names = set(HELPERS)
        text = helper_sources(names) + "".join(UNARY_KERNEL.format(name=n) for n in UNARY)
        text += "".join(BINARY_KERNEL.format(name=n) for n in [*BINARY, *INTEGER]) + REDUCE_KERNEL
        path = tmp_path_factory.mktemp("helpers") / "helper_kernels.py"
        path.write_text("import triton\nimport triton.language as tl\n\n" + text)
        spec = importlib.util.spec_from_file_location("helper_kernels", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module


def edge_values() -> torch.Tensor:
    tiny = torch.tensor([1e-7, -1e-7, 3e-5, -2e-4, 0.0, -0.0])
    halves = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999])
    wide = torch.tensor([-30.0, -9.0, -0.7, 0.3, 0.9, 4.0, 25.0, float("inf"), float("-inf"), float("nan")])
    return torch.cat([tiny, halves, wide, torch.linspace(-3, 3, 41)])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_helpers_match_torch(kernels, name: str) -> None:
    x = edge_values()
    if name in ("log1p",):
        x = x[(x > -1) | x.isnan()]
    y = torch.empty(x.shape, dtype=torch.bool if name in ("isnan", "isinf", "signbit") else torch.float32)
    getattr(kernels, f"unary_{name}")[(1,)](x, y, x.numel(), BLOCK=128)
    want = UNARY[name](x)
    if y.dtype == torch.bool:
        assert torch.equal(y, want)
    else:
        torch.testing.assert_close(y, want, rtol=2e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_helpers_match_torch(kernels, name: str) -> None:
    a = edge_values()
    b = edge_values().flip(0)
    if name == "pow":
        a = torch.cat([torch.tensor([-2.0, -2.0, -8.0, 0.0, 0.0, 3.0]), a.abs()[:20]])
        b = torch.cat([torch.tensor([3.0, 0.5, 1 / 3, 2.0, 0.0, -1.0]), torch.linspace(-2, 3, 20)])
    y = torch.empty_like(a)
    getattr(kernels, f"binary_{name}")[(1,)](a, b, y, a.numel(), BLOCK=128)
    torch.testing.assert_close(y, BINARY[name](a, b), rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer_helpers_take_pythons_sign_rules(kernels, name: str) -> None:
    a = torch.tensor([7, -7, 7, -7, 0, 6, -6, 13], dtype=torch.int32)
    b = torch.tensor([2, 2, -2, -2, 3, 3, -4, -5], dtype=torch.int32)
    y = torch.empty_like(a)
    getattr(kernels, f"binary_{name}")[(1,)](a, b, y, a.numel(), BLOCK=8)
    assert torch.equal(y, INTEGER[name](a, b))


def test_welford_reduce_and_combine_give_mean_and_variance(kernels) -> None:
    x = torch.randn(3, 64) * 5 + 3
    mean, m2 = torch.empty(3), torch.empty(3)
    kernels.welford_rows[(3,)](x, mean, m2, N=64, BLOCK=16)
    torch.testing.assert_close(mean, x.mean(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(m2 / 64, x.var(1, unbiased=False), rtol=1e-4, atol=1e-5)


def test_max_reduction_propagates_nan(kernels) -> None:
    x = torch.randn(2, 16)
    x[1, 5] = math.nan
    y = torch.empty(2)
    kernels.rowmax[(2,)](x, y, N=16)
    assert y[0] == x[0].max() and math.isnan(y[1])


def test_every_libdevice_helper_is_defined() -> None:
    assert set(LIBDEVICE_HELPERS.values()) <= set(HELPERS)
