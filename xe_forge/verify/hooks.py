"""Instrumentation inside the evaluation worker: launch counting, ghost replay, output poisoning.

These patch torch and triton in the worker process only, and only around the candidate's forward.
The candidate itself may not patch anything (static checks); the verifier may, because it is the
harness.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def _run_classes() -> list[type]:
    """The classes whose `.run` is a Triton launch: compiled JIT functions and the interpreter's."""
    classes = []
    from triton.runtime.jit import JITFunction

    classes.append(JITFunction)
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:  # pragma: no cover - very old triton
        pass
    return classes


class LaunchCounter:
    def __init__(self) -> None:
        self.count = 0


@contextlib.contextmanager
def count_launches(*, ghost: bool = False) -> Iterator[LaunchCounter]:
    """Count Triton launches; with ghost=True every launch becomes a no-op (the kernels do nothing)."""
    counter = LaunchCounter()
    saved = {cls: cls.__dict__["run"] for cls in _run_classes() if "run" in cls.__dict__}

    def wrap(original):
        def run(self, *args, **kwargs):
            if not kwargs.get("warmup", False):
                counter.count += 1
            if ghost:
                return None
            return original(self, *args, **kwargs)

        return run

    for cls, original in saved.items():
        cls.run = wrap(original)
    try:
        yield counter
    finally:
        for cls, original in saved.items():
            cls.run = original


_ALLOCATORS = ("empty", "empty_like", "empty_strided")


def _poison(t: Any) -> Any:
    import torch

    if torch.is_tensor(t):
        if t.is_floating_point():
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        elif t.is_complex():
            t.fill_(complex(float("nan"), float("nan")))
        else:
            t.fill_(torch.iinfo(t.dtype).max // 3)
    return t


@contextlib.contextmanager
def poisoned_allocations() -> Iterator[None]:
    """Uninitialised tensors come back filled with NaN, so an output element nobody wrote fails.

    Reading memory the reference (or an earlier call) left behind is a known hack; with this, the
    only way to get the right value into an output is to compute it.
    """
    import torch

    saved = {name: getattr(torch, name) for name in _ALLOCATORS}
    saved_new_empty = torch.Tensor.new_empty

    def wrap(fn):
        def alloc(*args, **kwargs):
            return _poison(fn(*args, **kwargs))

        return alloc

    for name, fn in saved.items():
        setattr(torch, name, wrap(fn))
    torch.Tensor.new_empty = wrap(saved_new_empty)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch, name, fn)
        torch.Tensor.new_empty = saved_new_empty
