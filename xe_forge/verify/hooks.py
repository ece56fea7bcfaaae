"""Instrumentation inside the candidate's process: launch counting, ghost replay, output poisoning,
and the patch guard.

These patch torch and triton in that process only, and only around the candidate's forward. The
candidate itself may not patch anything (static checks, then PatchGuard at run time); the harness
may. None of this decides a verdict on its own say-so: the reference and the comparison live in
another process (docs/VERIFIER.md).
"""

from __future__ import annotations

import builtins
import contextlib
import sys
import types
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
        self.names: set[str] = set()
        self.depth = 0  # > 0 while a Triton launch runs (the interpreter's own torch/numpy work is not the host's)


def kernel_name(jit: Any) -> str:
    fn = getattr(jit, "fn", jit)
    return str(getattr(fn, "__name__", "") or getattr(jit, "__name__", ""))


@contextlib.contextmanager
def count_launches(*, ghost: bool = False, label: bool = False) -> Iterator[LaunchCounter]:
    """Count Triton launches; with ghost=True every launch becomes a no-op (the kernels do nothing);
    with label=True each launch is a named profiler range, so its GPU kernels are accounted for."""
    counter = LaunchCounter()
    saved = {cls: cls.__dict__["run"] for cls in _run_classes() if "run" in cls.__dict__}

    def wrap(original):
        def run(self, *args, **kwargs):
            name = kernel_name(self)
            if not kwargs.get("warmup", False):
                counter.count += 1
                counter.names.add(name)
            if ghost:
                return None
            counter.depth += 1
            try:
                if label:
                    from torch.profiler import record_function

                    from xe_forge.verify.audit import TRITON_LABEL

                    with record_function(TRITON_LABEL + name):
                        return original(self, *args, **kwargs)
                return original(self, *args, **kwargs)
            finally:
                counter.depth -= 1

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
    own_new_empty = "new_empty" in vars(torch.Tensor)  # else inherited from TensorBase: restore by deleting

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
        if own_new_empty:
            torch.Tensor.new_empty = saved_new_empty
        else:
            del torch.Tensor.new_empty


class PatchGuard:
    """Fingerprints of the namespaces a candidate could patch to fool the harness, compared after a job.

    Static checks catch `torch.matmul = f`, not an alias (`ops = torch.nn.functional; ops.linear = f`),
    and in a warm worker such a patch would also poison every later evaluation. Watched: torch's main
    namespaces and nn.Module classes, the verifier's own modules, and the reference module with its
    classes. Module namespaces may gain names (lazy imports); class namespaces may not (a new
    `__call__` on nn.Linear overrides the inherited one). Values are held, so a freed object's id
    can never alias a new one.
    """

    def __init__(self) -> None:
        import torch
        import torch.nn.functional
        import torch.overrides
        import torch.profiler
        import torch.utils._python_dispatch as python_dispatch
        from triton.runtime.jit import JITFunction

        self._watched: list[tuple[str, Any, dict[str, tuple[Any, Any]], bool]] = []
        for module in (torch, torch.nn, torch.nn.functional, torch.linalg, torch.special, torch.fft, torch.cuda,
                       torch.overrides, torch.profiler, python_dispatch, builtins):
            self._watch(module.__name__, vars(module), strict=False)
        classes = [torch.Tensor, torch.cuda.Event, JITFunction, torch.overrides.TorchFunctionMode,
                   python_dispatch.TorchDispatchMode,
                   *(v for v in vars(torch.nn).values() if isinstance(v, type) and issubclass(v, torch.nn.Module))]
        for cls in classes:
            self._watch(f"{cls.__module__}.{cls.__qualname__}", vars(cls), strict=True)
        for name, module in list(sys.modules.items()):
            if (name == "xe_forge" or name.startswith("xe_forge.")) and module is not None:
                self._watch(name, vars(module), strict=False)

    def watch_module(self, module: Any) -> None:
        """Also watch a module loaded for this job (the reference) and the classes it defines."""
        self._watch(module.__name__, vars(module), strict=False)
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                self._watch(f"{module.__name__}.{value.__qualname__}", vars(value), strict=True)

    def _watch(self, label: str, namespace: Any, *, strict: bool) -> None:
        self._watched.append((label, namespace, _fingerprint(namespace), strict))

    @contextlib.contextmanager
    def harness_changes(self) -> Iterator[None]:
        """The harness's own patching inside this block is accepted (torch.compile of the baseline
        rebinds torch.manual_seed and nn.Module.__init__); a candidate's earlier patch still counts."""
        clean = not self.changed()
        try:
            yield
        finally:
            if clean:
                self._watched = [(label, ns, _fingerprint(ns), strict) for label, ns, _, strict in self._watched]

    def changed(self) -> list[str]:
        """Names rebound, deleted or (in classes) added since the snapshot, as `namespace.name`."""
        out = []
        for label, namespace, before, strict in self._watched:
            now = _fingerprint(namespace)
            for name, (value, code) in before.items():
                if name not in now or now[name][0] is not value or now[name][1] is not code:
                    out.append(f"{label}.{name}")
            if strict:
                out += [f"{label}.{name}" for name in now if name not in before]
        return out


def _fingerprint(namespace: Any) -> dict[str, tuple[Any, Any]]:
    """Each name's value and, for Python functions, its code object (`f.__code__ = g.__code__` counts).

    Single-underscore names are left out: modules keep private state there that changes on its own
    (torch.cuda's `_initialized`), and a kernel file may not reach private names at all (static scan).
    """
    return {name: (value, value.__code__ if isinstance(value, types.FunctionType) else None)
            for name, value in list(namespace.items()) if not (name.startswith("_") and not name.startswith("__"))}
