"""What crosses the lowering's seams: a recorded lowering (GPU side) and a packaged candidate.

A `Lowering` is what TorchInductor produced for one reference at one dtype, recorded on the machine
that has the GPU (the wrapper modules with their kernels inline, the launch configs the autotuner
settled on, which model value each graph input is). It is plain JSON, so a lowering made on a GPU
can be packaged, verified and kept as a test fixture anywhere, the CPU included.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from xe_forge.errors import ForgeError

PlaceholderKind = Literal["tensor", "symint", "scalar"]


class PackagingError(ForgeError):
    """The recorded lowering uses a construct the packager cannot express as a plain Triton module."""

    exit_code = 1


class Placeholder(BaseModel):
    """One input of the compiled graph and where its value comes from in the model's forward.

    `source` is TorchDynamo's name for it (e.g. `L['self']._modules['fc']._parameters['weight']`,
    `L['x'].size()[0]`); `scalar` marks a Python number the graph receives as a 0-d tensor.
    """

    source: str
    kind: PlaceholderKind = "tensor"


class LaunchConfig(BaseModel):
    """The config an Inductor kernel settled on: its block constexprs and launch options."""

    kwargs: dict[str, Any] = Field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 1
    grid_type: str | None = None


class Lowering(BaseModel):
    """TorchInductor's output for one reference at one dtype (benchmarks/lower_dump.py records these)."""

    problem: str
    dtype: str
    ok: bool = False
    error: str | None = None
    traceback: str | None = None
    codes: list[str] = Field(default_factory=list)
    configs: dict[str, LaunchConfig] = Field(default_factory=dict)
    placeholders: list[Placeholder] | None = None
    outputs: int = 1
    returns_tuple: bool = False
    guards: list[str] = Field(default_factory=list)
    ranges: dict[str, list[int | None]] = Field(default_factory=dict)
    """Value range Dynamo assumed for each size input (source -> [lo, hi]; hi None is unbounded)."""
    config: dict[str, str] | None = None
    """The model's literal configuration when lowered (expression -> repr), None in older records."""
    budget_s: float | None = None
    """The autotuning budget the lowering ran under, and whether it ran out (kept the best so far)."""
    budget_spent: bool = False
    extern: list[str] = Field(default_factory=list)
    compile_s: float | None = None
    rewrites: list[str] = Field(default_factory=list)
    versions: dict[str, str] = Field(default_factory=dict)
    device: str | None = None
    max_abs_err: float | None = None


class Packaged(BaseModel):
    """A standalone kernel module made from a lowering, and what the user must know about it."""

    source: str
    kernels: list[str]
    extern: list[str] = Field(default_factory=list)
    interpretable: bool = True
    notes: list[str] = Field(default_factory=list)
    paths: dict[str, list[str]] = Field(default_factory=dict)
    """Each path of a port ('fast0', ..., 'general') -> the Triton kernels it launches."""
    signatures: dict[str, str] = Field(default_factory=dict)
    """Each fast path -> the signature it serves, in words."""

    def path_of(self, launched: list[str]) -> str:
        """Which paths a shape's calls took, from the kernels they launched: 'fast0', 'general', or both joined
        ('fast0+general': the contiguous trials took the fast path, the strided one the general path), else
        'unknown'."""
        taken = sorted(name for name, kernels in self.paths.items() if set(launched) & set(kernels))
        return "+".join(taken) if taken else "unknown"
