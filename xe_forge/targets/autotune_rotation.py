"""@triton.autotune in checked calls: every launch takes the next config, so every config is checked.

On a GPU the autotuner benchmarks its configs per key and serves the fastest, so any config may be
the one a user gets. The interpreter has no clock worth ranking by: a stand-in that ranks every
config equal always served the first one, and a config that is wrong (a "fast" variant that drops
the bias) was never compared (red team 2, root cause 10). Here each Autotuner launch forgets its
cached choice and takes the configs in turn, from a secret starting point: across a check's calls
(three trials, the same-storage call, every unseen shape) each config serves whole forwards whose
outputs are compared. Configs not taken by a launch are not run (they run when their turn comes),
but their tiles are recorded for the unseen-shape plan, as a benchmark would have launched them.

Under the interpreter the rotation is always on. On a GPU it is on only inside `rotating()` (the
candidate's checked calls): there a benchmark at every unseen shape cost seconds per candidate (each
config compiled and timed for a shape only its outputs are read at) and checked only the fastest
config. Timed calls run the real autotuner, whose choice the timed outputs' fingerprints check, and
no choice the rotation made is left in its cache for them.
"""

from __future__ import annotations

import contextlib
import secrets
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any

_TURNS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_START = secrets.randbelow(1 << 16)  # unknowable to a candidate, fixed for the worker's life
_CHOSEN: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_PRUNED: weakref.WeakKeyDictionary[Any, list] = weakref.WeakKeyDictionary()


def turn(tuner: Any) -> int:
    """This launch's position in the tuner's rotation (advances by one per launch)."""
    n = _TURNS.get(tuner, _START)
    _TURNS[tuner] = n + 1
    return n


_STATE = {"always": False, "depth": 0}


def active() -> bool:
    return _STATE["always"] or _STATE["depth"] > 0


@contextlib.contextmanager
def rotating() -> Iterator[None]:
    """The rotation on for the body (a GPU's checked calls); on leaving, every choice it made is
    forgotten, so a timed call at the same key benchmarks afresh."""
    _STATE["depth"] += 1
    try:
        yield
    finally:
        _STATE["depth"] -= 1
        if not active():
            for tuner in list(_TURNS.keys()):
                tuner.cache.clear()


def install(always: bool = True) -> None:
    """Replace the autotuner's benchmark with the rotation (idempotent, for the worker's lifetime);
    `always`: on for every launch (the interpreter), else only inside `rotating()`."""
    from triton.runtime import autotuner

    _STATE["always"] = _STATE["always"] or always
    cls = autotuner.Autotuner
    if getattr(cls.run, "_xe_forge_rotation", False):
        return
    original_run, original_prune, original_bench = cls.run, cls.prune_configs, cls._bench
    original_do_bench = cls.__dict__.get("do_bench")

    def run(self, *args, **kwargs):
        if len(self.configs) > 1 and active():
            self.cache.clear()  # a cached choice would keep one config for every call at this key
            self.cache_results = False  # no timings from disk either
            _CHOSEN[self] = turn(self)
        return original_run(self, *args, **kwargs)

    def prune_configs(self, kwargs):
        pruned = original_prune(self, kwargs)
        _PRUNED[self] = list(pruned)
        return pruned

    def bench(self, *args, config, **meta):
        if not active():
            return original_bench(self, *args, config=config, **meta)
        pruned = _PRUNED.get(self) or [config]
        if config is pruned[_CHOSEN.get(self, 0) % len(pruned)]:
            return [1.0, 1.0, 1.0]
        _record_untried(self, args, {**meta, **config.all_kwargs()})
        return [2.0, 2.0, 2.0]

    def do_bench(self):  # replaces a cached_property on the class
        if active():
            return self._do_bench or _equal_timings
        return original_do_bench.__get__(self, type(self))

    run._xe_forge_rotation = True
    cls.run = run
    cls._bench = bench
    cls.prune_configs = prune_configs
    if original_do_bench is not None:
        cls.do_bench = property(do_bench)


def _equal_timings(kernel_call: Any, quantiles: Any = None, **_: Any) -> Any:
    kernel_call()
    return [1.0, 1.0, 1.0] if quantiles else 1.0


# who hears of a config a launch did not run: the harness's launch record (verify/hooks.py registers
# itself at install; targets sit below verify, so the record comes to this module, not the other way)
_UNTRIED: list[Callable[[Any, tuple, dict], None]] = []


def on_untried(recorder: Callable[[Any, tuple, dict], None]) -> None:
    if recorder not in _UNTRIED:
        _UNTRIED.append(recorder)


def _record_untried(tuner: Any, args: tuple, kwargs: dict) -> None:
    """A config this launch does not run still counts for the tiles the unseen shapes must cross."""
    fn = tuner.fn
    while hasattr(fn, "fn") and not isinstance(fn.fn, types.FunctionType):  # through @triton.heuristics
        fn = fn.fn
    for recorder in _UNTRIED:
        recorder(fn, args, kwargs)
