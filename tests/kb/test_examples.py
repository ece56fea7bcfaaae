"""Every bundled example kernel, run by Triton's interpreter on small shapes against PyTorch.

Shapes are odd on purpose (masks and partial tiles are exercised) and small, with the examples' own
large CPU tiles, so the whole module runs in a few seconds.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from xe_forge.kb import bundled_dir

EXAMPLES = bundled_dir() / "examples"


@pytest.fixture(scope="module", autouse=True)
def interpreter():
    """The examples need the interpreter on since before triton's first import (see conftest.py)."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    if os.environ.get("TRITON_INTERPRET") != "1" or not isinstance(tl.cdiv, InterpretedFunction):
        pytest.fail("triton was imported before TRITON_INTERPRET=1 was set; set it in tests/conftest.py")


@pytest.fixture
def single_run_autotuner(monkeypatch: pytest.MonkeyPatch):
    """Multi-config autotune needs a do_bench under the interpreter: run each config once, rank equal."""
    from triton.runtime import autotuner

    def bench(kernel_call, quantiles=None, **_):
        kernel_call()
        return [1.0, 1.0, 1.0] if quantiles else 1.0

    monkeypatch.setattr(autotuner.Autotuner, "do_bench", property(lambda self: bench))


def _load(name: str):
    path = EXAMPLES / name
    spec = importlib.util.spec_from_file_location(f"kb_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _linear_ref(model, x):
    return torch.sigmoid(x @ model.weight.T + model.bias) * model.scale


CASES: list[tuple[str, list, Callable[[], list[torch.Tensor]], Callable, float]] = [
    ("xe_gemm_tdesc.py", [],
     lambda: [torch.randn(100, 80, dtype=torch.float16), torch.randn(80, 136, dtype=torch.float16)],
     lambda m, a, b: (a.float() @ b.float()).half(), 2e-2),
    ("gemm_bias_sigmoid_fused.py", [96, 80, 2.0], lambda: [torch.randn(70, 96)], _linear_ref, 1e-5),
    ("bmm_group_swizzle.py", [],
     lambda: [torch.randn(3, 150, 70), torch.randn(3, 70, 90)], lambda m, a, b: torch.bmm(a, b), 1e-4),
    ("gemm_persistent.py", [],
     lambda: [torch.randn(100, 72), torch.randn(72, 130)], lambda m, a, b: a @ b, 1e-4),
    ("elementwise_autotuned.py", [300], lambda: [torch.randn(37, 300)],
     lambda m, x: torch.nn.functional.gelu(x + m.bias, approximate="tanh"), 1e-5),
    ("softmax_rows.py", [], lambda: [torch.randn(37, 300) * 4], lambda m, x: torch.softmax(x, dim=1), 1e-6),
    ("logsumexp_online.py", [], lambda: [torch.randn(5, 9000) * 4], lambda m, x: torch.logsumexp(x, dim=1), 1e-5),
    ("swish_tanh_exp2.py", [], lambda: [torch.randn(37, 301) * 3], lambda m, x: torch.tanh(x * torch.sigmoid(x)), 1e-6),
    ("conv2d_igemm_bias_relu.py", [4, 20, (3, 2), 2, 1, 2], lambda: [torch.randn(3, 4, 13, 10)],
     lambda m, x: torch.relu(m.conv(x)), 1e-5),
    ("conv2d_igemm_nhwc_gelu.py", [5, 7, 3, 2, 1], lambda: [torch.randn(3, 5, 10, 7)],
     lambda m, x: torch.nn.functional.gelu(m.conv(x)), 1e-5),
    ("conv3d_igemm_groupnorm.py", [3, 16, 3, 4], lambda: [torch.randn(2, 3, 6, 7, 5)],
     lambda m, x: m.group_norm(m.conv(x)), 1e-5),
    ("layernorm_rows.py", [301], lambda: [torch.randn(37, 301) * 3 + 1], lambda m, x: m.norm(x), 1e-5),
    ("rmsnorm_rows.py", [301], lambda: [torch.randn(5, 7, 301) * 3], lambda m, x: m.norm(x), 1e-5),
]


@pytest.mark.parametrize("name, init, make_inputs, reference, atol", CASES, ids=[c[0] for c in CASES])
def test_example_matches_pytorch(name, init, make_inputs, reference, atol, single_run_autotuner):
    torch.manual_seed(0)
    module = _load(name)
    model = module.Model(*init)
    inputs = make_inputs()
    with torch.no_grad():
        got = model(*inputs)
        want = reference(model, *inputs)
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got.float(), want.float(), atol=atol, rtol=1e-3 if atol > 1e-3 else 1e-4)


def test_every_example_file_is_tested_and_attached(bundled):
    files = {p.name for p in EXAMPLES.glob("*.py")}
    assert files == {c[0] for c in CASES}
    attached = {Path(e.example.path).name for e in bundled.filter(kind="example")}
    assert attached == files


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_example_has_the_kernelbench_interface(name):
    module = _load(name)
    assert callable(module.get_inputs) and callable(module.get_init_inputs)
    module.Model(*module.get_init_inputs())  # constructible from its own init inputs
    assert os.environ["TRITON_INTERPRET"] == "1"
