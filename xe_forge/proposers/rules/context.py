"""What a transform receives, the registry of transforms by recipe name, and per-kernel application.

Every transform is a function `(RecipeContext) -> Applied` that raises NotApplicable with a precise
reason when a precondition fails. Most transforms work kernel by kernel; `per_kernel` runs one over
every kernel of the file, keeps the edits of those that apply and explains the others.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import libcst as cst

from xe_forge.kb.schema import PROBLEM_CLASSES
from xe_forge.proposers.rules.cst_tools import Edit, apply_edits, parse
from xe_forge.proposers.rules.kernels import Kernel, find_kernels
from xe_forge.proposers.rules.launches import Launch, find_launches
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.options import ToolchainLike


@dataclass
class RecipeContext:
    """One recipe applied to one kernel file."""

    source: str
    params: dict[str, Any]
    target: str
    toolchain: ToolchainLike
    stage: str = ""
    config_spaces: list[dict[str, Any]] = field(default_factory=list)
    preconditions: list[str] = field(default_factory=list)
    """The recipe's human-readable preconditions; the few with a machine reading are enforced."""
    _grids: dict[int, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def module(self) -> cst.Module:
        return parse(self.source)

    @cached_property
    def kernels(self) -> dict[str, Kernel]:
        kernels = find_kernels(self.module)
        if not kernels:
            raise NotApplicable("no module-level @triton.jit kernel in the file")
        return kernels

    @cached_property
    def launches(self) -> list[Launch]:
        return find_launches(self.module, self.kernels)

    def grid(self, launch: Launch) -> Any:
        """The launch's analysed grid (grid.Grid), computed once per launch."""
        from xe_forge.proposers.rules.grid import analyze_grid  # grid.py imports this module's peers

        if id(launch.call) not in self._grids:
            self._grids[id(launch.call)] = analyze_grid(self.module, launch)
        return self._grids[id(launch.call)]

    def class_params(self, kernel: Kernel) -> dict[str, Any]:
        """Recipe params for this kernel's problem class: params keyed by class (gemm-epilogue falls
        back to gemm), or the flat params when they are not keyed by class."""
        if not any(key in PROBLEM_CLASSES for key in self.params):
            return dict(self.params)
        for name in (kernel.problem_class, "gemm" if kernel.problem_class == "gemm-epilogue" else None):
            if name and isinstance(self.params.get(name), dict):
                return dict(self.params[name])
        raise NotApplicable(f"recipe params have nothing for {kernel.name}'s problem class '{kernel.problem_class}'")


_NEEDS_DOT = re.compile(r"\b(uses|with|calls|has) (a )?tl\.dot\b")
_NO_DOT = re.compile(r"\b(no|without) tl\.dot\b")


def precondition_gate(ctx: RecipeContext, kernel: Kernel) -> None:
    """Enforce the preconditions that name the problem class ("the kernel uses tl.dot", "the kernel
    has no tl.dot"): a GEMM's 32-warp launch recipe must not land on its elementwise epilogue kernel."""
    is_dot = kernel.uses_dot
    for text in ctx.preconditions:
        if _NO_DOT.search(text) and is_dot or _NEEDS_DOT.search(text) and not _NO_DOT.search(text) and not is_dot:
            raise NotApplicable(f"precondition '{text}' does not hold for this {kernel.problem_class} kernel")


Transform = Callable[[RecipeContext], Applied]
REGISTRY: dict[str, Transform] = {}


def register(name: str) -> Callable[[Transform], Transform]:
    def wrap(fn: Transform) -> Transform:
        REGISTRY[name] = fn
        return fn

    return wrap


KernelStep = Callable[[RecipeContext, Kernel], tuple[dict[cst.CSTNode, Edit], str]]


def per_kernel(ctx: RecipeContext, step: KernelStep, what: str) -> Applied:
    """Run `step` (edits and a short phrase) on every kernel; one Applied for all that apply.

    Edits from different kernels touch disjoint nodes except at shared host code; a kernel whose
    edits would collide with an earlier one's is refused rather than merged.
    """
    edits: dict[cst.CSTNode, Edit] = {}
    done: list[str] = []
    refused: list[str] = []
    for kernel in ctx.kernels.values():
        try:
            precondition_gate(ctx, kernel)
            kernel_edits, phrase = step(ctx, kernel)
        except NotApplicable as err:
            refused.append(f"{kernel.name}: {err.reason}")
            continue
        if edits.keys() & kernel_edits.keys():
            refused.append(f"{kernel.name}: its edits overlap another kernel's")
            continue
        edits.update(kernel_edits)
        done.append(phrase)
    if not done:
        raise NotApplicable("; ".join(refused) if refused else f"nothing to {what}")
    code = apply_edits(ctx.module, edits)
    if code == ctx.source:
        raise NotApplicable(f"{what} left the source unchanged")
    rationale = "; ".join(done)
    if refused:
        rationale += f" (not applied to {'; '.join(refused)})"
    return Applied(code=code, rationale=rationale[:1].upper() + rationale[1:] + ".")
