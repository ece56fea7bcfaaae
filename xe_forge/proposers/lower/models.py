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
