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
from xe_forge.proposers.rules.cst_tools import Edit, apply_edits, parse, walk
from xe_forge.proposers.rules.grid import analyze_grid
from xe_forge.proposers.rules.kernels import Kernel, find_kernels
from xe_forge.proposers.rules.launches import Launch, find_launches
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.normalize import normalized
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
    reference: str = ""
    """Source of the PyTorch reference (fuse-epilogue traces it); empty when there is none."""
    _grids: dict[int, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def module(self) -> cst.Module:
        """The parsed file as the recipes read it: Inductor's idioms respelled (normalize.py)."""
        return normalized(parse(self.source))

    def unchanged(self, code: str) -> bool:
        """Whether `code` is the file again: as written, or only respelled (normalize.py)."""
        return code == self.source or code == self.module.code

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


def _called_by_kernels(ctx: RecipeContext, name: str) -> bool:
    """Whether a @triton.jit function of the file calls `name` or passes it on (a reduction's combine
    function: `tl.reduce(x, 1, combine)`): it is a helper, not a kernel of its own."""
    return any(isinstance(n, cst.Name) and n.value == name for k in ctx.kernels.values() for n in walk(k.node.body))


Transform = Callable[[RecipeContext], Applied]
REGISTRY: dict[str, Transform] = {}


def register(name: str) -> Callable[[Transform], Transform]:
    def wrap(fn: Transform) -> Transform:
        REGISTRY[name] = fn
        return fn

    return wrap


KernelStep = Callable[[RecipeContext, Kernel], tuple[dict[cst.CSTNode, Edit], str]]


def refusals(refused: dict[str, list[str]]) -> str:
    """'k1: reason' for one kernel, 'reason (k1, k2)' for several: each reason said once."""
    return "; ".join(f"{names[0]}: {reason}" if len(names) == 1 else f"{reason} ({', '.join(names)})"
                     for reason, names in refused.items())


def per_kernel(ctx: RecipeContext, step: KernelStep, what: str) -> Applied:
    """Run `step` (edits and a short phrase) on every kernel; one Applied for all that apply.

    Edits from different kernels touch disjoint nodes except at shared host code; a kernel whose
    edits would collide with an earlier one's is refused rather than merged.
    """
    edits: dict[cst.CSTNode, Edit] = {}
    done: list[str] = []
    refused: dict[str, list[str]] = {}  # reason -> the kernels it refused, so a reason is said once
    launched = {launch.kernel.name for launch in ctx.launches}
    for kernel in ctx.kernels.values():
        if kernel.name not in launched and _called_by_kernels(ctx, kernel.name):
            continue  # a @triton.jit helper that kernels call: no launch of its own to transform
        try:
            precondition_gate(ctx, kernel)
            kernel_edits, phrase = step(ctx, kernel)
        except NotApplicable as err:
            refused.setdefault(err.reason, []).append(kernel.name)
            continue
        if edits.keys() & kernel_edits.keys():
            refused.setdefault("its edits overlap another kernel's", []).append(kernel.name)
            continue
        edits.update(kernel_edits)
        done.append(phrase)
    if not done:
        raise NotApplicable(refusals(refused) if refused else f"nothing to {what}")
    code = apply_edits(ctx.module, edits)
    if ctx.unchanged(code):
        raise NotApplicable(f"{what} left the source unchanged")
    rationale = "; ".join(done)
    if refused:
        rationale += f" (not applied to {refusals(refused)})"
    return Applied(code=code, rationale=rationale[:1].upper() + rationale[1:] + ".")
