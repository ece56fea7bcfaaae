"""Whose code asked torch for an operation: the Python stack, read where the dispatch audit sees the op.

The audit used to exempt whatever ran while a Triton launch was in progress, and admit whatever
ran while an allowed op was on the stack; candidate code runs inside both windows (a grid callable,
a pre-run hook, a tensor-like argument's `data_ptr`, a flag object's `__bool__` inside an allowed
call). Here the decision is by what the code is, not by when it runs: walking outwards from the
dispatch, frames of torch itself, of the standard library, of other installed libraries and of the
harness are transparent (they act for whoever called them); the first frame that is not decides:
- an allowance frame (the harness's entry into an allowed torch function, or the call of an
  allowed torch.nn submodule): that allowance's own dispatch;
- one of Triton's own bookkeeping functions (LAUNCHER_CODE), while a launch is in progress: the
  launcher's work (the interpreter's copies of the arguments, the autotuner's reset and restore);
- anything else: the candidate's work. That includes the kernel file's own code, code generated
  for it, and any callable Triton calls back: a torch function registered as a pre-run hook or
  passed as a hook has no frame of its own, so the innermost non-transparent frame is Triton's
  launcher that called it (`JITFunction.run`, the interpreter's `GridExecutor.__call__`), which is
  not bookkeeping: whatever a launch runs beyond its own copies is the candidate's.
- a walk that reaches the harness's call of the model without deciding: the candidate's too. The
  audit runs only around the candidate's forward, so torch work there is asked for by the model,
  whether or not a frame of the kernel file is on the stack (red team 5: a Model that is an
  `nn.Sequential` under another name, a `forward` bound to torch's own as a class or instance
  attribute or a property, ran the whole GEMM in torch with only torch's frames above the harness's,
  and read 0 FLOP). Nothing is the harness's by default: its own work inside the window is named
  (HARNESS_CODE).
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Literal

Who = Literal["candidate", "allowed", "launcher", "harness"]


def _dir_of(module: Any) -> str:
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep


def _roots() -> dict[str, tuple[str, ...]]:
    import torch
    import triton

    import xe_forge

    stdlib = {os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")}
    libraries = {os.path.abspath(p) + os.sep for p in [*site.getsitepackages(), site.getusersitepackages(),
                                                        sysconfig.get_paths()["purelib"],
                                                        sysconfig.get_paths()["platlib"]]}
    return {"triton": (_dir_of(triton),), "torch": (_dir_of(torch),), "harness": (_dir_of(xe_forge),),
            "library": tuple(sorted(libraries, key=len, reverse=True)),
            "stdlib": tuple(sorted(stdlib, key=len, reverse=True))}


_ROOTS: dict[str, tuple[str, ...]] | None = None
_KINDS: dict[str, str] = {}


def file_kind(filename: str) -> str:
    """'triton', 'torch', 'harness', 'library', 'stdlib' or 'candidate' for a code object's file.

    Site-packages lie under the standard library's folder on some installs, so libraries are
    matched before it; torch, triton and the harness before any library.
    """
    global _ROOTS
    kind = _KINDS.get(filename)
    if kind is not None:
        return kind
    if _ROOTS is None:
        _ROOTS = _roots()
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    kind = "candidate"
    if filename.startswith("<frozen "):
        kind = "stdlib"
    else:
        for name in ("triton", "torch", "harness", "library", "stdlib"):
            if any(path.startswith(root) for root in _ROOTS[name]):
                kind = name
                break
    _KINDS[filename] = kind
    return kind


TRANSPARENT = frozenset({"torch", "library", "stdlib", "harness"})

# Triton's functions (and the harness's wrappers of them) that do torch work on the launch's behalf
# (file name, function name): the interpreter's host copies of the arguments and back, the
# autotuner's default reset/restore hooks (a user-given pre_hook replaces those and runs as what it
# is), and the GPU benchmark's cache flush.
LAUNCHER_CODE = frozenset({
    ("interpreter.py", "_init_args_hst"), ("interpreter.py", "_to_cpu"),
    ("interpreter.py", "_restore_args_dev"), ("interpreter.py", "_from_cpu"),
    ("autotuner.py", "_pre_hook"), ("autotuner.py", "_post_hook"),
    ("testing.py", "do_bench"),
    ("strict_interpreter.py", "init_args_hst"),  # the harness's record of the launch's buffers (bounds checks)
})


# The harness's own functions that may do torch work inside the audited call (file name, function name):
# none today; an entry here is the only way work with no deciding frame is not the candidate's.
HARNESS_CODE: frozenset[tuple[str, str]] = frozenset()


def is_launcher_code(code: Any) -> bool:
    return (os.path.basename(code.co_filename), code.co_name) in LAUNCHER_CODE


@dataclass
class Allowance:
    """One allowed entry on the stack: its frame and the allowance name that admitted it."""

    frame: FrameType
    name: str


@dataclass
class Attribution:
    """The stack's allowance entries, and whether a Triton launch is in progress."""

    in_launch: Callable[[], bool] = lambda: False
    entries: list[Allowance] = field(default_factory=list)

    def push(self, frame: FrameType, name: str) -> Allowance:
        entry = Allowance(frame, name)
        self.entries.append(entry)
        return entry

    def pop(self, entry: Allowance) -> None:
        """Remove one entry wherever it is (an exception may have skipped an inner pop: its frame is
        gone from the stack then, so it can never match a walk)."""
        for i in range(len(self.entries) - 1, -1, -1):
            if self.entries[i] is entry:
                del self.entries[i]
                return

    def who(self, frame: FrameType | None) -> tuple[Who, str]:
        """Who owns the work asked for from `frame` outwards, and the allowance name when allowed."""
        allowed = {id(e.frame): e.name for e in self.entries}
        f = frame
        while f is not None:
            name = allowed.get(id(f))  # the entries hold their frames: an id cannot be reused meanwhile
            if name is not None:
                return "allowed", name
            kind = file_kind(f.f_code.co_filename)
            if kind == "harness" and self.in_launch() and is_launcher_code(f.f_code):
                return "launcher", ""
            if kind == "harness" and (os.path.basename(f.f_code.co_filename), f.f_code.co_name) in HARNESS_CODE:
                return "harness", ""
            if kind == "triton":
                return ("launcher", "") if self.in_launch() and is_launcher_code(f.f_code) else ("candidate", "")
            if kind == "candidate":
                return "candidate", ""
            f = f.f_back
        return "candidate", ""


def caller() -> FrameType | None:
    """The frame that called the function calling this one."""
    return sys._getframe(2)
