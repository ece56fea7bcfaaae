"""A bounded lowering: TorchInductor's autotuning stops measuring once the problem's budget is spent.

max-autotune measures every candidate config of every GEMM/convolution template and every pointwise
or reduction kernel; a skinny 128x32768x32768 GEMM took over two minutes that way. Under a budget
each selection still measures its first candidate (so there is always a measured winner), and once
the budget is spent the remaining candidates of every later selection are not measured: they count
as infinitely slow, so each selection keeps the best configuration found so far. Precompilation
(the parallel compile of the candidates) gets the remaining budget as its timeout. The bookkeeping
is plain Python over an injectable clock, so the CPU tests drive it with a fake clock and a fake
autotuner; `inductor_budget` installs it on Inductor's two measuring entry points on a GPU.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

DEFAULT_BUDGET_S = 60.0
SKIPPED = float("inf")
_first: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("xe_forge_first_choice", default=None)


class Budget:
    """Seconds of autotuning, spent as measurements happen."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = float(seconds)
        self.clock = clock
        self.start = clock()
        self.measured = 0
        self.skipped = 0

    def left(self) -> float:
        return self.seconds - (self.clock() - self.start)

    @property
    def spent(self) -> bool:
        return self.skipped > 0

    def allow(self, first: bool) -> bool:
        """Whether to measure a candidate; the first of a selection is always measured."""
        if first or self.left() > 0:
            self.measured += 1
            return True
        self.skipped += 1
        return False

    def summary(self) -> str:
        used = self.clock() - self.start
        tail = f", {self.skipped} candidates not measured (the budget was spent)" if self.skipped else ""
        return f"autotuning {used:.1f} s of a {self.seconds:.0f} s budget: {self.measured} candidates measured{tail}"


def selection(budget: Budget, run: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a function that measures one selection's candidates: inside it, the first measurement is free."""

    @functools.wraps(run)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        token = _first.set([True])
        try:
            return run(*args, **kwargs)
        finally:
            _first.reset(token)

    return wrapped


def measurement(budget: Budget, measure: Callable[..., float]) -> Callable[..., float]:
    """Wrap a function that measures one candidate: once the budget is spent it returns inf unmeasured."""

    @functools.wraps(measure)
    def wrapped(*args: Any, **kwargs: Any) -> float:
        flag = _first.get()
        first = flag is None or flag[0]
        if flag is not None:
            flag[0] = False
        if not budget.allow(first):
            return SKIPPED
        return measure(*args, **kwargs)

    return wrapped


def patch(owner: Any, name: str, wrapper: Callable[[Callable[..., Any]], Callable[..., Any]],
          stack: contextlib.ExitStack) -> bool:
    """Replace owner.name by wrapper(original) until `stack` closes; False where owner has no such name."""
    original = owner.__dict__.get(name)
    if original is None:
        return False
    func = original.__func__ if isinstance(original, classmethod) else original
    new = wrapper(func)
    setattr(owner, name, classmethod(new) if isinstance(original, classmethod) else new)
    stack.callback(setattr, owner, name, original)
    return True


@contextlib.contextmanager
def inductor_budget(budget: Budget) -> Iterator[list[str]]:
    """Inductor's template selection and kernel autotuning under `budget` (yields what was patched)."""
    from torch._inductor import config as icfg
    from torch._inductor import select_algorithm
    from torch._inductor.runtime import triton_heuristics

    patched: list[str] = []
    with contextlib.ExitStack() as stack:
        selector = select_algorithm.AlgorithmSelectorCache
        if patch(selector, "benchmark_choices", lambda f: selection(budget, f), stack):
            patched.append("AlgorithmSelectorCache.benchmark_choices")
        if patch(selector, "benchmark_choice", lambda f: measurement(budget, f), stack):
            patched.append("AlgorithmSelectorCache.benchmark_choice")
        tuner = triton_heuristics.CachingAutotuner
        if patch(tuner, "benchmark_all_configs", lambda f: selection(budget, f), stack):
            patched.append("CachingAutotuner.benchmark_all_configs")
        if patch(tuner, "bench", lambda f: measurement(budget, f), stack):
            patched.append("CachingAutotuner.bench")
        settings = {k: v for k, v in {"precompilation_timeout_seconds": max(1, int(budget.left())),
                                      "autotune_in_subproc": False}.items() if hasattr(icfg, k)}
        with icfg.patch(settings):
            yield patched
