"""Class 5: the static scan reads the whole module and refuses every escape route, wherever it sits.

Each fixture is linear/good.py with one route added: at module level, in a class body, a decorator,
__init__, a hook, a helper, a launch, or a @triton.jit body. Each must be refused, at its `# HACK`
line, for its own reason, before anything runs.
"""

from __future__ import annotations

import pytest

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source

from .helpers import FIXTURES, finding, hack_line, source

# fixture -> (check, words the message names)
ESCAPES = {
    "getframe_module_level": ("sandbox", "sys._getframe"),
    "inspect_class_body": ("sandbox", "inspect"),
    "gc_in_decorator": ("sandbox", "gc"),
    "subclasses_walk": ("sandbox", "__subclasses__"),
    "ctypes_import": ("sandbox", "ctypes"),
    "importlib_harness": ("sandbox", "importlib"),
    "foreign_globals": ("sandbox", "__globals__"),
    "torch_jit_script": ("sandbox", "torch.jit"),
    "torch_compile_launcher": ("sandbox", "torch.compile"),
    "torch_library_op": ("sandbox", "torch.library"),
    "register_hook_in_init": ("sandbox", "register_forward_pre_hook"),
    "global_module_hook": ("sandbox", "register_module_forward_hook"),
    "jit_calls_host": ("jit-body", "_host_helper"),
    "jit_calls_torch": ("jit-body", "torch.relu"),
    "constexpr_host_fn": ("jit-body", "_host_act"),
    "environ_write": ("monkey-patch", "os.environ"),
    "finalizer": ("sandbox", "__del__"),
    "metaclass": ("sandbox", "metaclass"),
    "clock_import": ("sandbox", "time"),
    "dynamic_getattr": ("sandbox", "computed name"),
    "profiler_probe": ("sandbox", "profiler"),
    "tf32_flag_write": ("monkey-patch", "allow_tf32"),
    "side_event_timer": ("sandbox", "torch.cuda.Event"),
}


def test_every_escape_fixture_is_listed():
    assert {p.stem for p in (FIXTURES / "escapes").glob("*.py")} == set(ESCAPES)


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_escape_route_is_refused_at_its_line(name: str):
    text = source(f"escapes/{name}.py")
    check, words = ESCAPES[name]
    found = [f for f in check_source(text).findings if f.check == check]
    assert found, [f.render() for f in check_source(text).findings]
    assert any(words in f.message for f in found), [f.render() for f in found]
    assert hack_line(text) in {f.line for f in check_source(text).findings}


def test_an_escape_fails_the_evaluation_at_the_static_stage_without_starting_a_worker(evaluator: Evaluator, linear):
    verdict = evaluator.evaluate(source("escapes/ctypes_import.py"), linear)
    assert verdict.stage_failed == "static" and "ctypes" in finding(verdict, "sandbox").message


@pytest.mark.parametrize("snippet", [
    'import os\n_THREADS = os.cpu_count() or 1\n',  # not the environment: it tells a check (test_call_modes.py)
    'if __name__ == "__main__":\n    print(get_inputs())\n',
    "import math\n_SCALE = math.sqrt(2.0)\n",
    "import functools\n\n\n@functools.lru_cache\ndef _tiles(n):\n    return (16, 16, 16)\n",
])
def test_ordinary_module_code_is_not_an_escape(snippet: str):
    text = source("linear/good.py").replace("\n\nclass ModelNew", "\n\n" + snippet + "\n\nclass ModelNew", 1)
    assert check_source(text).findings == []


RAW_MM = "        y = torch.ops.aten.mm.default(x, w.t())  # HACK"


@pytest.mark.parametrize("line, allow", [
    (RAW_MM, []),  # not allowed at all
    (RAW_MM, ["mm"]),  # a short name does not open raw operators
    (RAW_MM, ["torch.mm"]),  # nor does the public function's name
    ("        y = torch.ops.aten.mm(x, w.t())  # HACK", ["torch.ops.aten.mm.default"]),  # another spelling
    ("        y = torch.ops.mylib.mm.default(x, w.t())  # HACK", ["torch.ops.mylib.mm.default"]),  # not aten
    ("        y = torch.ops.load_library('x.so')  # HACK", ["torch.ops.load_library"]),
])
def test_raw_operators_stay_refused_unless_the_allowance_names_that_aten_op(line: str, allow: list[str]):
    text = source("hacks/torch_matmul.py").replace("        y = torch.matmul(x, w.t())  # HACK", line)
    found = [f for f in check_source(text, allow=allow).findings if f.check == "sandbox"]
    assert found and "raw operators" in found[0].message and found[0].line == hack_line(text)


def test_an_aten_op_the_allowance_names_in_full_passes_the_scan():
    """TorchInductor keeps library calls as `torch.ops.aten.<op>.<overload>`; allowed by that name, it is
    torch work under an allowance (metered by the dispatch audit), not an escape."""
    text = source("hacks/torch_matmul.py").replace("        y = torch.matmul(x, w.t())  # HACK", RAW_MM)
    assert check_source(text, allow=["torch.ops.aten.mm.default"]).findings == []
