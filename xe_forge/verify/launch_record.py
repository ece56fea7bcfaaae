"""What the kernel really launches with: grids and integer constexprs (block sizes, loop steps).

Unseen shapes must cross the tiles the kernel uses, not the ones a recipe assumes: a LayerNorm
that walks its row in 256-column blocks is only tested by a width past 256. The launch counter
records, for every launch (autotuned configs included, since the autotuner launches through the
same `run`), the grid and the integer constexpr arguments bound to the kernel's signature
(defaults of constexpr parameters that were never passed count too). Host code is not trusted for
this: it only steers which sizes are checked, and a lie here only makes the checked sizes larger.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from typing import Any

_SIGNATURES: dict[int, tuple[inspect.Signature, frozenset[str]] | None] = {}
MIN_TILE = 2


def _signature(jit: Any) -> tuple[inspect.Signature, frozenset[str]] | None:
    fn = getattr(jit, "fn", None)
    key = id(fn)
    if key not in _SIGNATURES:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            _SIGNATURES[key] = None
        else:
            constexprs = frozenset(name for name, param in sig.parameters.items()
                                   if "constexpr" in str(param.annotation))
            _SIGNATURES[key] = (sig, constexprs)
    return _SIGNATURES[key]


class LaunchLog:
    """The tiles and grids of one call's launches."""

    def __init__(self) -> None:
        self.tiles: set[int] = set()
        self.grids: list[tuple[int, ...]] = []
        self.flags: set[str] = set()  # "kernel.NAME=True": the branch a bool constexpr (EVEN_K) selected

    def record(self, jit: Any, args: tuple, kwargs: dict) -> None:
        found = _signature(jit)
        if found is None:
            return
        sig, constexprs = found
        params = {k: v for k, v in kwargs.items() if k in sig.parameters}
        try:
            bound = sig.bind_partial(*args, **params)
        except TypeError:
            return
        bound.apply_defaults()
        refusal = _callable_argument(jit, bound.arguments)
        if refusal is not None:
            from xe_forge.verify import guarded

            guarded._refuse(refusal)  # raises: the launch never runs
        for name in constexprs:
            value = bound.arguments.get(name)
            if isinstance(value, bool):
                self.flags.add(f"{getattr(getattr(jit, 'fn', None), '__name__', '?')}.{name}={value}")
            elif isinstance(value, int) and value >= MIN_TILE:
                self.tiles.add(value)

    @staticmethod
    def meta(jit: Any, args: tuple, kwargs: dict) -> dict[str, Any] | None:
        """The launch's arguments by name, defaults applied: what Triton hands a grid callable."""
        found = _signature(jit)
        if found is None:
            return None
        sig = found[0]
        try:
            bound = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
        except TypeError:
            return None
        bound.apply_defaults()
        return dict(bound.arguments)

    def grid(self, grid: Any) -> Any:
        """The grid as passed, recorded (a callable is wrapped so its result is recorded when Triton calls it)."""
        if callable(grid):
            def recorded(meta: Any) -> Any:
                out = grid(meta)
                self._add_grid(out)
                return out

            return recorded
        self._add_grid(grid)
        return grid

    def _add_grid(self, grid: Any) -> None:
        dims = grid if isinstance(grid, tuple | list) else (grid,)
        if all(isinstance(d, int) for d in dims):
            self.grids.append(tuple(dims))


def one_sided_flags(reports: list[Any]) -> list[str]:
    """Bool constexprs (an EVEN_K heuristic) that took one value at every checked shape: the other branch
    never ran, so nothing here verifies it (unseen shapes include exact multiples of the tiles for this)."""
    seen: dict[str, set[str]] = {}
    for report in reports:
        for flag in report.flags:
            name, _, value = flag.rpartition("=")
            seen.setdefault(name, set()).add(value)
    return [f"{name} was {next(iter(values))} at every checked shape: the branch it selects otherwise never ran "
            "and is not verified" for name, values in sorted(seen.items()) if len(values) == 1 and len(reports) > 1]


def _callable_argument(jit: Any, arguments: dict[str, Any]) -> str | None:
    """A launch argument that is not kernel data: refused. An allowlist (what a GPU's compiler takes as
    an argument), not a list of what attacks were seen: tensors and parameters, numbers, strings, None,
    torch dtypes, and Triton's own objects (a @triton.jit function, a tl dtype or constexpr, a tensor
    descriptor over a tensor), alone or in tuples and lists of these. The interpreter runs a jit body as
    Python, so anything else passed in and called or read in the body runs host code inside the launch,
    where no dispatch audit sees it: a bound method (red team 5, a05), a class, an instance with a
    method, a tuple holding a function (red team 6, a22b-e), a tensor subclass whose `data_ptr` is
    Python."""
    kernel = getattr(getattr(jit, "fn", None), "__name__", "?")
    for name, value in arguments.items():
        why = _not_kernel_data(value)
        if why is not None:
            return (f"{kernel}: launch argument {name} is {why}: a kernel takes tensors, numbers, strings, "
                    "dtypes, @triton.jit functions and tuples of these")
    return None


def _not_kernel_data(value: Any, depth: int = 0) -> str | None:
    """Why `value` is not an argument a kernel may take (None when it is)."""
    import torch

    kind = type(value)
    if value is None or kind in (bool, int, float, str, torch.dtype) or kind in (torch.Tensor, torch.nn.Parameter):
        return None
    if kind.__module__ == "numpy" and isinstance(value, numbers.Number):  # a numpy scalar: data, no hooks
        return None
    if kind in (tuple, list) and depth < 4:
        return next((why for item in value if (why := _not_kernel_data(item, depth + 1)) is not None), None)
    if _triton_own(kind):  # what it holds must be kernel data too: a `tl.constexpr(f)` wraps a host function
        # (red team 7, a01 and eight more), a tensor descriptor reads its base tensor's pointer
        held = [getattr(value, name) for name in ("value", "base") if hasattr(value, name)]
        if depth >= 4:
            return f"a {kind.__name__} nested too deep" if held else None
        return next((why for item in held if (why := _not_kernel_data(item, depth + 1)) is not None), None)
    if isinstance(value, type):
        return f"a class ({value.__name__})"
    if callable(value):
        return f"a Python callable ({kind.__name__})"
    if isinstance(value, torch.Tensor):
        return f"a tensor subclass ({kind.__name__})"
    return f"a {kind.__name__} object"


@functools.lru_cache(maxsize=256)  # a class's home never changes; this runs at every launch
def _triton_own(kind: type) -> bool:
    """A class Triton itself defines: its module is Triton's, that module holds the class under its name,
    and the module's file lies in Triton's package (a class may claim any `__module__`)."""
    import sys
    from pathlib import Path

    import triton

    module = sys.modules.get(getattr(kind, "__module__", "") or "")
    if module is None or not module.__name__.startswith("triton.") or getattr(module, kind.__name__, None) is not kind:
        return False
    root = Path(triton.__file__).resolve().parent
    return Path(getattr(module, "__file__", "") or "/").resolve().is_relative_to(root)
