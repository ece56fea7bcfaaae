"""Triton's interpreter without work whose result it throws away.

Overflow checks: every integer add, sub and mul builds an int64 copy of both operands, the result
and a range test, then hands it to `device_assert`, which drops it unless the launch runs with
`debug` (off by default, as on a GPU). In CPU checks that was about 40% of the runner's interpreter
time. Here the check is skipped when `device_assert` would drop it, and runs as before with `debug`.

Re-patching of the language on every call of a device function:

The interpreter points `triton.language`'s builtins at its NumPy versions when a launch starts, and
again, through `inspect.getmembers` of three modules, every time a kernel calls another
`@triton.jit` function, although the launch's own patching is still in force. In a CPU check of
example 37 (a GroupNorm kernel calling a helper per element block) that was 55 of the runner's 148
seconds. Here a device function's call skips the patching when the launch in progress (its own
patching, or an earlier device function's, which the interpreter leaves in force) has already patched
every language module the function sees; anything else goes through the interpreter's own code, and
what a launch patched it still restores itself.

Installed once in the candidate's process with the other interpreter hooks (hooks.install). A Triton
whose interpreter has other internals is left as it is.
"""

from __future__ import annotations

import inspect
from typing import Any

_INSTALLED: list[bool] = []


def install() -> bool:
    """Wrap the interpreter's language patching and overflow checks (idempotent); False where its
    internals differ."""
    if _INSTALLED:
        return True
    try:
        import triton.language as tl
        from triton.runtime import interpreter as interp
    except ImportError:
        return False
    _skip_dropped_overflow_checks(interp)
    executor, scope_class = getattr(interp, "GridExecutor", None), getattr(interp, "_LangPatchScope", None)
    original = getattr(interp, "_patch_lang", None)
    if executor is None or scope_class is None or not callable(original) or "__call__" not in vars(executor):
        return False
    launches: list[frozenset[int] | None] = []  # per launch in progress: the language modules it patched
    languages = (tl, tl.core)

    def seen_by(fn: Any) -> frozenset[int]:
        return frozenset(id(v) for v in fn.__globals__.values() if inspect.ismodule(v) and v in languages)

    def patch_lang(fn: Any) -> Any:
        langs = seen_by(fn)
        if launches and launches[-1] is not None and langs <= launches[-1]:
            return scope_class()  # a device function inside a launch that patched its modules: nothing to do
        scope = original(fn)
        if launches:  # the launch's own patching, or a device function's (which the interpreter never
            launches[-1] = (launches[-1] or frozenset()) | langs  # restores: it holds to the launch's end)
        return scope

    launch = vars(executor)["__call__"]

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        launches.append(None)
        try:
            return launch(self, *args, **kwargs)
        finally:
            launches.pop()

    interp._patch_lang = patch_lang
    executor.__call__ = call
    _INSTALLED.append(True)
    return True


def _skip_dropped_overflow_checks(interp: Any) -> bool:
    """Skip an overflow check whose assert `device_assert` would drop (no `debug`)."""
    semantic = getattr(interp, "interpreter_semantic", None)
    original = getattr(type(semantic), "binary_op_sanitize_overflow_impl", None)
    drops = getattr(type(semantic), "device_assert", None)
    if semantic is None or not callable(original) or not callable(drops):
        return False

    def sanitize(lhs: Any, rhs: Any, binary_op: Any) -> Any:
        if not semantic.builder.options.debug:
            return None  # device_assert returns at once without debug: nothing computed here is used
        return original(semantic, lhs, rhs, binary_op)

    semantic.binary_op_sanitize_overflow_impl = sanitize
    return True
