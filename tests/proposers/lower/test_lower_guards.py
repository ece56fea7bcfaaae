"""Inductor's shape guards (sympy text over the model's values) as Python a port checks on every call."""

from __future__ import annotations

import pytest

from xe_forge.proposers.lower.guards import python_guard

ROOTS = {"self", "x"}


@pytest.mark.parametrize("guard, python", [
    ("Eq(Mod(x.size(1), 16), 0)", "x.size(1) % 16 == 0"),
    ("Ne(x.size(0), 1)", "x.size(0) != 1"),
    ("x.size(0) >= 2", "x.size(0) >= 2"),
    ("Eq(self.conv.weight.size(0), 32)", "self.conv.weight.size(0) == 32"),
    ("Eq(FloorDiv(x.size(2), 2)*2, x.size(2))", "x.size(2) // 2 * 2 == x.size(2)"),
    ("Max(1, x.size(2) - 2) <= 64", "max(1, x.size(2) - 2) <= 64"),
    ("(x.size(0) >= 2) & (x.size(0) <= 100)", "x.size(0) >= 2 and x.size(0) <= 100"),
    ("Eq(self.block[0].weight.size(1), x.size(1))", "self.block[0].weight.size(1) == x.size(1)"),
])
def test_guards_become_python_over_the_models_values(guard: str, python: str) -> None:
    text = python_guard(guard, ROOTS)
    assert text == python
    sizes = {"x": _Sized((4, 32, 8)), "self": None}
    if "self" not in python:
        assert isinstance(eval(text, {}, sizes), bool)  # noqa: S307 - the translated guard, over a test object


@pytest.mark.parametrize("guard", [
    "Eq(s77, 2)",  # a symbol with no source: nothing to read it from
    "SomeNewSympyFunction(x.size(0)) > 1",
    "x.size(0).__class__ == int",
    "os.system('true') == 0",
    "Eq(y.size(0), 2)",  # not a forward argument
    "Eq(self._private.size(0), 2)",
    "x.size(i) == 2",
])
def test_anything_else_is_refused(guard: str) -> None:
    assert python_guard(guard, ROOTS) is None


class _Sized:
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def size(self, i: int) -> int:
        return self.shape[i]
