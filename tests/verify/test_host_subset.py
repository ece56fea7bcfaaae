"""Issue 26, classes 2 and 9: host code is an allowed subset of Python, not Python minus a list.

Statically (host_subset.py, on the AST and Python's own symbol tables) and at run time (guarded.py:
the kernel file's builtins), with one set of tables (subset_rules.py). Tensor methods are known by
their receiver: a Python set's `add` in a launcher is not torch's.
"""

from __future__ import annotations

import inspect

import pytest
import torch

from xe_forge.verify import guarded
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source, torch_ops_of
from xe_forge.verify.subset_rules import NN_MODULE_NAMES, TORCH_NN_SUBMODULES, TORCH_SUBMODULES, path_refusal

from .helpers import failed, finding, hack_line, source

# class 2: attack -> words of the static finding (None: nothing static, the run-time guard refuses it)
DYNAMIC = {"dynamic/attrgetter_closure.py": "operator", "dynamic/formatter_field.py": "format",
           "dynamic/type_run_assign.py": "type", "dynamic/private_name.py": "_forward_pre_hooks",
           "dynamic/interpreter_global.py": "inspect", "dynamic/getattr_alias.py": None}


@pytest.mark.parametrize("path", sorted(p for p, w in DYNAMIC.items() if w))
def test_dynamic_routes_are_outside_the_subset(path: str):
    text = source(path)
    found = check_source(text).findings
    assert any(DYNAMIC[path] in f.message for f in found), [f.render() for f in found]
    assert hack_line(text) in {f.line for f in found}


def test_a_computed_name_is_refused_by_the_run_time_guard(evaluator: Evaluator, linear):
    assert check_source(source("dynamic/getattr_alias.py")).findings == []
    verdict = evaluator.evaluate(source("dynamic/getattr_alias.py"), linear)
    failed(verdict, "audit")
    assert "__globals__" in finding(verdict, "host-subset").message


def test_a_python_sets_add_is_not_torchs_add():
    text = source("honest/set_add_launcher.py")
    assert check_source(text).findings == [] and "method:add" not in torch_ops_of(text)
    tensor_add = text.replace("self.seen.add((M, N, K))", "x.add(1.0)")
    assert "method:add" in torch_ops_of(tensor_add)


BASE = source("linear/good.py")


@pytest.mark.parametrize("snippet, words", [
    ("_M = [torch][0]", "as a value"),
    ("_F = torch.nn.functional", "as a value"),
    ("def _peek(f):\n    return f.__code__", "__code__"),
    ("def _peek(f):\n    return f.f_back", "f_back"),
    ("def _peek(f):\n    return '{0.__class__}'.format(f)", "format field"),
    ("class _L:\n    def go(self):\n        return 1\n\n\n_g = _L.go", "from its class"),
    ("def _set(k):\n    k.fn = None", "only on `self`"),
    ("def _x():\n    return vars()", "vars"),
    ("def _x():\n    return dir()", "neither defines nor imports"),
    ("import torch.utils.data", "not for kernel files"),
    ("_S = torch.cuda.Stream", "Stream"),
    ("_C = triton.testing.do_bench", "Triton's internals"),
    ("from functools import update_wrapper", "functools"),
    ("class _M(nn.Module):\n    def state_dict(self):\n        return {}", "redefines nn.Module"),
])
def test_outside_the_subset(snippet: str, words: str):
    text = BASE.replace("\n\nclass ModelNew", "\n\n" + snippet + "\n\n\nclass ModelNew", 1)
    found = [f.render() for f in check_source(text).findings]
    assert any(words in f for f in found), found


@pytest.mark.parametrize("snippet", [
    "import math\n_SCALE = math.sqrt(2.0)",
    "import functools\n\n\n@functools.lru_cache\ndef _tiles(n):\n    return (16, 16, 16)",
    "_X = hasattr(torch, 'xpu') and torch.xpu.is_available()",
    "class _Cache:\n    def __init__(self):\n        self._store = {}\n\n    def get(self, k):\n        return self._store.get(k)",
    "def _version_of(t):\n    return t._version",
    "_NAME = f'{TILES[0]}x{TILES[1]}'",
    "_DESC = '{}x{}'.format(*TILES[:2])",
])
def test_inside_the_subset(snippet: str):
    text = BASE.replace("\n\nclass ModelNew", "\n\n" + snippet + "\n\n\nclass ModelNew", 1)
    assert check_source(text).findings == []


def test_the_run_time_guard_applies_the_same_rules():
    assert guarded.attribute_refusal(torch, "mm") is None
    assert guarded.attribute_refusal(torch, "jit") and guarded.attribute_refusal(torch, "_C")
    assert guarded.attribute_refusal(print, "__self__") and guarded.attribute_refusal(object(), "f_back")
    with pytest.raises(guarded.SubsetRefusal):
        guarded.guarded_import("ctypes")
    assert guarded.refusals() == ["import of 'ctypes': `ctypes` is not a module a kernel file may import"]
    assert guarded.guarded_import("math").sqrt(4.0) == 2.0


def test_the_torch_tables_cover_the_installed_torch():
    """A torch submodule or nn.Module name this list lacks would be read as an ordinary torch function."""
    submodules = {n for n in dir(torch) if not n.startswith("_") and inspect.ismodule(getattr(torch, n, None))}
    assert submodules <= TORCH_SUBMODULES, submodules - TORCH_SUBMODULES
    nn_submodules = {n for n in dir(torch.nn) if not n.startswith("_") and inspect.ismodule(getattr(torch.nn, n))}
    assert nn_submodules <= TORCH_NN_SUBMODULES
    names = {n for n in dir(torch.nn.Module) if not n.startswith("__")} | set(vars(torch.nn.Module()))
    assert names <= NN_MODULE_NAMES, names - NN_MODULE_NAMES
    assert path_refusal("torch.nn.functional.gelu") is None and path_refusal("torch.linalg.vecdot") is None


def test_a_host_built_tensor_descriptor_is_inside_the_subset(monkeypatch):
    """`TensorDescriptor.from_tensor` on the host (red team 7, h04, honest) read as "the module ... as a value"
    when `triton.tools.tensor_descriptor` was not imported yet in the checking process: the path did not
    resolve and the fallback table took every `triton.tools.*` for a module."""
    import sys

    import triton.tools

    from xe_forge.verify import host_subset

    monkeypatch.delitem(sys.modules, "triton.tools.tensor_descriptor", raising=False)
    monkeypatch.delattr(triton.tools, "tensor_descriptor", raising=False)
    host_subset._resolves_to_module.cache_clear()
    snippet = ("from triton.tools.tensor_descriptor import TensorDescriptor\n\n\n"
               "def _desc(t):\n    return TensorDescriptor.from_tensor(t, [16, 16])")
    text = BASE.replace("\n\nclass ModelNew", "\n\n" + snippet + "\n\n\nclass ModelNew", 1)
    try:
        assert check_source(text).findings == []
    finally:
        host_subset._resolves_to_module.cache_clear()
