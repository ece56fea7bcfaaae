"""The worker's instrumentation, in-process: output poisoning and the patch guard.

Both touch torch globally, so each test checks that everything is put back exactly as it was.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from xe_forge.problem.cases import import_from_path
from xe_forge.verify.hooks import PatchGuard, poisoned_allocations

from .helpers import FIXTURES


def test_uninitialised_allocations_come_back_poisoned():
    like = torch.ones(2, 3)
    with poisoned_allocations():
        floats = [torch.empty(4), torch.empty_like(like), torch.empty_strided((2, 2), (2, 1)), like.new_empty(5)]
        ints = torch.empty(3, dtype=torch.int32)
        flags = torch.empty(3, dtype=torch.bool)
    assert all(bool(t.isnan().all()) for t in floats)
    assert bool((ints == torch.iinfo(torch.int32).max // 3).all()) and bool(flags.all())


def test_poisoning_restores_torch_exactly():
    before = {name: getattr(torch, name) for name in ("empty", "empty_like", "empty_strided")}
    own = "new_empty" in vars(torch.Tensor)
    with poisoned_allocations():
        pass
    assert {name: getattr(torch, name) for name in before} == before
    assert ("new_empty" in vars(torch.Tensor)) == own  # an inherited method is not left shadowed


def test_guard_sees_a_function_rebound_through_an_alias():
    guard = PatchGuard()
    ops, original = F, F.gelu
    ops.gelu = lambda x, approximate="none": x
    try:
        assert guard.changed() == ["torch.nn.functional.gelu"]
    finally:
        ops.gelu = original
    assert guard.changed() == []


def test_guard_sees_a_method_added_to_a_module_class_and_a_code_swap():
    guard = PatchGuard()
    torch.nn.Linear.__call__ = lambda self, x: x  # overrides nn.Module.__call__ for every Linear
    try:
        assert "torch.nn.modules.linear.Linear.__call__" in guard.changed()
    finally:
        del torch.nn.Linear.__call__
    assert guard.changed() == []


def test_guard_sees_a_watched_reference_module_patched():
    module = import_from_path(FIXTURES / "linear" / "ref_pytorch.py", "reference")
    guard = PatchGuard()
    guard.watch_module(module)
    module.Model.forward = lambda self, x: x * 0
    assert guard.changed() == [f"{module.__name__}.Model.forward"]


def test_guard_sees_the_harnesss_own_classes_patched():
    """A device timer replaced on its class would change every figure the process reports."""
    import xe_forge.targets.cpu as cpu

    guard = PatchGuard()
    real = cpu.CpuDevice.elapsed_ms
    cpu.CpuDevice.elapsed_ms = lambda self, a, b: 0.0
    try:
        assert "xe_forge.targets.cpu.CpuDevice.elapsed_ms" in guard.changed()
    finally:
        cpu.CpuDevice.elapsed_ms = real
    assert guard.changed() == []


def test_guard_ignores_new_names_in_module_namespaces():
    guard = PatchGuard()
    torch._xe_forge_guard_probe = 1  # lazy submodule imports add names like this
    try:
        assert guard.changed() == []
    finally:
        del torch._xe_forge_guard_probe


def test_guard_accepts_the_harnesss_own_patches_but_not_earlier_ones():
    guard = PatchGuard()
    original = F.silu
    try:
        with guard.harness_changes():  # e.g. torch.compile of the baseline rebinding torch functions
            F.silu = lambda x, inplace=False: x
        assert guard.changed() == []
    finally:
        F.silu = original
    assert guard.changed() == ["torch.nn.functional.silu"]  # putting it back is a change from the new baseline

    guard = PatchGuard()
    F.silu = lambda x, inplace=False: x  # the candidate's patch, before the harness block
    try:
        with guard.harness_changes():
            pass
        assert guard.changed() == ["torch.nn.functional.silu"]
    finally:
        F.silu = original


def test_a_device_context_still_places_what_a_constructor_allocates():
    """In a fresh worker the wrappers come first: torch's set of device constructors, built at its first
    use, then held the wrappers, and models built under `with torch.device(...)` landed on the CPU (3-4 s
    of host init per check on an H200, a stray tensor on the wrong device). A fresh process, as a worker."""
    import subprocess
    import sys

    code = ("import torch\nfrom xe_forge.verify import hooks\nhooks.install()\n"
            "with torch.device('meta'):\n    lin = torch.nn.Linear(4, 4)\n    t = torch.empty(3)\n"
            "    like = torch.empty_like(t)\n"
            "with hooks.poisoned_allocations():\n    p = torch.empty(2)\n"
            "print(lin.weight.device, t.device, like.device, bool(p.isnan().all()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["meta", "meta", "meta", "True"], out.stdout + out.stderr
