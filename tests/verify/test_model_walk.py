"""Red team 1, root causes 1, 2 and 4: the harness never runs candidate code outside the audit, paths
are checked by the object they reach, and the class checked is the class run.

The run-time half (model_walk.py) is tested on real objects here, so that it holds even where the
static check would have been fooled by a spelling; the corpus in fixtures/redteam1 runs the attacks
through `check`.
"""

from __future__ import annotations

import types

import pytest
import torch
from torch import nn
from torch.nn import Module as Base

from xe_forge.verify import guarded
from xe_forge.verify.model_walk import entry_refusal, load_state, named_state, refusal, set_training
from xe_forge.verify.state_check import state_entries
from xe_forge.verify.subset_rules import path_refusal


class _Weight(nn.Parameter):
    calls = 0

    def detach(self):
        _Weight.calls += 1
        return super().detach()

    def copy_(self, src, non_blocking=False):
        _Weight.calls += 1
        return super().copy_(src)


class _Plain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.norm = nn.BatchNorm1d(3)


class _Sneaky(Base):  # an nn.Module under an alias: the real class decides, not the spelling
    def state_dict(self, *args, **kwargs):
        raise AssertionError("the harness called a candidate override")


def test_state_is_read_and_loaded_without_calling_the_model():
    model = _Plain()
    assert refusal(model) is None
    state = named_state(model)
    assert list(state) == list(model.state_dict(keep_vars=True))
    assert all(state[k] is v for k, v in model.state_dict(keep_vars=True).items())
    new = {k: torch.full_like(v, 2) for k, v in model.state_dict().items()}
    load_state(model, new, [(k, k) for k in new])
    assert torch.equal(model.w, torch.full((3,), 2.0))


def test_parameter_subclasses_are_refused_and_never_called():
    model = _Plain()
    model.w = _Weight(torch.randn(3))
    assert "_Weight" in refusal(model)
    _Weight.calls = 0
    state_entries(model, [("w", "w")])  # even if it were handled, torch's own detach runs
    load_state(model, {"w": torch.ones(3)}, [("w", "w")])
    assert _Weight.calls == 0


def test_module_overrides_are_found_by_the_class_not_its_spelling():
    model = _Plain()
    model.child = _Sneaky()
    assert "state_dict" in refusal(model)
    state_entries(model, [("w", "w")])  # reading state never calls the override


def test_the_entry_must_be_the_class_defined_under_its_name():
    mod = types.ModuleType("xe_forge_user_probe")
    exec("import torch.nn as nn\nclass Model(nn.Module):\n    pass\n", mod.__dict__)
    assert entry_refusal(mod.Model, mod) is None
    honest = mod.Model
    mod.Model = lambda n: nn.Sequential(nn.LayerNorm(n))
    assert "function" in entry_refusal(mod.Model, mod)
    mod.Model = nn.LayerNorm
    assert "not the class defined" in entry_refusal(mod.Model, mod)
    assert "not the file's class" in refusal(nn.LayerNorm(3), honest)


@pytest.mark.parametrize("path, reached", [
    ("torch.nn.init.torch.threading.Thread", "threading"), ("typing.operator.attrgetter", "typing"),
    ("typing.sys.modules", "typing"), ("torch.nn.functional.importlib", "importlib"),
    ("torch.nn.functional.np", "numpy"), ("torch.nn.functional.dataclasses.inspect", "inspect"),
    ("triton.language.core.builtins", "builtins")])
def test_paths_are_checked_by_the_object_they_reach(path: str, reached: str):
    assert reached in (path_refusal(path) or "")


@pytest.mark.parametrize("path", ["os.path.join", "torch.nn.functional.relu", "triton.language.float32", "math.sqrt",
                                  "functools.reduce", "warnings.warn", "os.abort", "torch.nn.init.math.sqrt"])
def test_what_host_code_needs_still_resolves(path: str):
    assert path_refusal(path) is None


def test_getattr_never_hands_back_a_module_or_a_foreign_callable():
    import typing

    guarded.refusals()
    with pytest.raises(guarded.SubsetRefusal):
        guarded.guarded_getattr(torch.nn, "init")
    with pytest.raises(guarded.SubsetRefusal):
        guarded.guarded_getattr(typing, "get_type_hints")
    assert guarded.refusals()
    assert guarded.guarded_getattr(torch.nn.functional, "relu") is torch.nn.functional.relu


@pytest.mark.parametrize("cookie, refused", [("# coding: utf-7", True), ("# -*- coding: latin-1 -*-", True),
                                             ("# -*- coding: utf-8 -*-", False), ("# plain comment", False)])
def test_the_text_checked_is_the_text_imported(cookie: str, refused: bool):
    from xe_forge.verify.static import check_source

    found = [f for f in check_source(cookie + "\nimport torch\n").findings if f.check == "encoding"]
    assert bool(found) == refused


def test_eval_mode_is_set_on_every_module_without_running_the_files_methods():
    """The harness puts a candidate in eval mode as `model.eval()` leaves it, but no `train` override of
    the file runs (it would be candidate code outside a watched call)."""
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))

        def train(self, mode: bool = True):  # noqa: ARG002
            raise AssertionError("the file's train() ran")

    model = Model()
    set_training(model, False)
    assert [m.training for m in model.modules()] == [False] * 4
    set_training(model, True)
    assert all(m.training for m in model.modules())
