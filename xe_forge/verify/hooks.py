"""Instrumentation inside the candidate's process: launch counting, ghost replay, output poisoning,
and the patch guard.

These wrap torch's allocators and Triton's launch in that process once, before any candidate is
imported, and switch modes by state the candidate cannot reach (so checked and timed calls see the
same functions). The
candidate itself may not patch anything (static checks, then PatchGuard at run time); the harness
may. None of this decides a verdict on its own say-so: the reference and the comparison live in
another process (docs/VERIFIER.md).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import sys
import types
from collections.abc import Iterator
from typing import Any

from xe_forge.verify.launch_record import LaunchLog


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
        self.log = LaunchLog()  # grids and constexpr tiles: what unseen shapes must cross


def kernel_name(jit: Any) -> str:
    fn = getattr(jit, "fn", jit)
    return str(getattr(fn, "__name__", "") or getattr(jit, "__name__", ""))


class _Modes:
    """What the permanent wrappers do now. The wrappers around Triton's `run` and torch's allocators are
    installed once per worker, before any candidate is imported, and never removed: a candidate sees the
    same functions in a checked call, a timed call and at import (comparing `torch.empty` with the one it
    captured tells it nothing). Only this state, which host code cannot reach, changes."""

    counter: LaunchCounter | None = None
    ghost = False
    label = False
    poison = False


_INSTALLED: list[bool] = []


def install() -> None:
    """Wrap Triton's launch and torch's allocators for the worker's lifetime (idempotent)."""
    if _INSTALLED:
        return
    import torch

    for cls in _run_classes():
        if "run" in cls.__dict__:
            cls.run = _launch_wrapper(cls.__dict__["run"])
    _keep_device_contexts(torch)
    for name in _ALLOCATORS:
        setattr(torch, name, _alloc_wrapper(getattr(torch, name)))
    torch.Tensor.new_empty = _alloc_wrapper(torch.Tensor.new_empty)
    from xe_forge.targets.autotune_rotation import on_untried

    on_untried(record_tiles)  # configs the CPU's autotune rotation does not run this time still count
    from xe_forge.verify import interpreter_speed, strict_interpreter

    strict_interpreter.install()  # masked-off lanes, tl.multiple_of and grid limits as a GPU has them
    interpreter_speed.install()  # a device function's call does not re-patch what its launch patched
    _INSTALLED.append(True)


def _keep_device_contexts(torch: Any) -> None:
    """`with torch.device(d):` gives d to the constructors in a set torch builds once, at first use, from
    `torch.empty` and the rest: built after the wrappers below, it held them, the C functions they call
    were no longer in it, and every model a runner built under the device's context came out on the
    CPU (0.2-0.4 s of host init per GEMM weight on an H200, 3-4 s per check, and any tensor a constructor
    made but never registered stayed on the CPU). Built here first, it holds torch's own functions."""
    try:
        from torch.utils._device import _device_constructors
    except ImportError:  # a torch without the set: nothing to keep
        return
    _device_constructors()


def _launch_wrapper(original):
    @functools.wraps(original)  # the same name, module and docs as Triton's own
    def run(self, *args, **kwargs):
        counter = _Modes.counter
        if counter is None:
            return original(self, *args, **kwargs)
        ghost = _Modes.ghost
        name = kernel_name(self)
        if not kwargs.get("warmup", False):
            counter.count += 1
            counter.names.add(name)
            counter.log.record(self, args, kwargs)
            if "grid" in kwargs and not ghost:
                kwargs = {**kwargs, "grid": counter.log.grid(kwargs["grid"])}
        counter.depth += 1  # a launch in progress, no-op or not: its host copies are Triton's work
        try:
            if ghost:
                _ask_grid(self, args, kwargs)
                return None
            if _Modes.label:
                from torch.profiler import record_function

                from xe_forge.verify.audit import TRITON_LABEL

                with record_function(TRITON_LABEL + name):
                    return original(self, *args, **kwargs)
            return original(self, *args, **kwargs)
        finally:
            counter.depth -= 1

    return run


def _ask_grid(jit: Any, args: tuple, kwargs: dict) -> None:
    """A no-op launch still calls its grid callable, as a real one does: a count kept there advances in
    the warm calls too (runner.warm). What it raises with these arguments (the interpreter hands it
    host copies) is not the candidate's: the real launch would have had its own."""
    grid = kwargs.get("grid")
    if not callable(grid):
        return
    meta = _interpreted_meta(jit, args, kwargs) or LaunchLog.meta(jit, args, kwargs)
    if meta is not None:
        with contextlib.suppress(Exception):
            grid(meta)


def _interpreted_meta(jit: Any, args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """What the interpreter hands a grid callable: host copies, tensors and ints as interpreter values
    (constexprs as given). Plain torch tensors there would tell a no-op launch from a real one, so host
    code could count real launches and behave only in the few a check runs (red team 4, R6)."""
    try:
        from triton.runtime import interpreter as interp
    except ImportError:
        return None
    if not isinstance(jit, getattr(interp, "InterpretedFunction", ())):
        return None
    try:
        executor = interp.GridExecutor(jit.fn, jit.arg_names, None)
        spec = inspect.getfullargspec(jit.fn)
        named = {k: v for k, v in kwargs.items() if k in spec.args or k in spec.kwonlyargs}
        host_args, host_kwargs = executor._init_args_hst(args, named)
        call = inspect.getcallargs(jit.fn, *host_args, **host_kwargs)
        return {name: arg if name in executor.constexprs else interp._implicit_cvt(arg) for name, arg in call.items()}
    except Exception:
        return None


def record_tiles(jit: Any, args: tuple, kwargs: dict) -> None:
    """Tiles of a launch the harness chose not to run (an autotune config not taken this time)."""
    if _Modes.counter is not None:
        _Modes.counter.log.record(jit, args, kwargs)


def _alloc_wrapper(fn):
    @functools.wraps(fn)  # the same name and module as torch's own (the host subset resolves it to torch)
    def alloc(*args, **kwargs):
        out = fn(*args, **kwargs)
        return _poison(out) if _Modes.poison else out

    return alloc


@contextlib.contextmanager
def count_launches(*, ghost: bool = False, label: bool = False) -> Iterator[LaunchCounter]:
    """Count Triton launches; with ghost=True every launch becomes a no-op (the kernels do nothing);
    with label=True each launch is a named profiler range, so its GPU kernels are accounted for."""
    install()
    counter = LaunchCounter()
    saved = (_Modes.counter, _Modes.ghost, _Modes.label)
    _Modes.counter, _Modes.ghost, _Modes.label = counter, ghost, label
    try:
        yield counter
    finally:
        _Modes.counter, _Modes.ghost, _Modes.label = saved


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
def poisoned_allocations(on: bool = True) -> Iterator[None]:
    """Uninitialised tensors come back filled with NaN, so an output element nobody wrote fails.

    Reading memory the reference (or an earlier call) left behind is a known hack; with this, the
    only way to get the right value into an output is to compute it. The allocators are the same
    functions whether or not this is on (install()). `on=False` leaves the allocator as production
    has it: a few checked calls, chosen in secret, are not poisoned, so a kernel that reads its fresh
    output buffer and computes only where it finds NaN fails there (red team 2, root cause 1).
    """
    install()
    saved = _Modes.poison
    _Modes.poison = on
    try:
        yield
    finally:
        _Modes.poison = saved


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
                for cls in _harness_classes(name, module):
                    self._watch(f"{name}.{cls.__qualname__}", vars(cls), strict=True)

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


def _harness_classes(name: str, module: Any) -> list[type]:
    """The classes the harness runs on (devices, the runner, the timer): a class attribute replaced
    there (`CpuDevice.elapsed_ms = lie`) would change what the harness measures. Pydantic models are
    data, and rebuild their own class attributes lazily."""
    from pydantic import BaseModel

    if not name.startswith(("xe_forge.targets.", "xe_forge.verify.")):
        return []
    return [v for v in list(vars(module).values())
            if isinstance(v, type) and v.__module__ == name and not issubclass(v, BaseModel)]


def _fingerprint(namespace: Any) -> dict[str, tuple[Any, Any]]:
    """Each name's value and, for Python functions, its code object (`f.__code__ = g.__code__` counts).

    Single-underscore names are left out: modules keep private state there that changes on its own
    (torch.cuda's `_initialized`), and a kernel file may not reach private names at all (static scan).
    """
    return {name: (value, value.__code__ if isinstance(value, types.FunctionType) else None)
            for name, value in list(namespace.items()) if not (name.startswith("_") and not name.startswith("__"))}
