"""What crosses the general path's process boundary: the reference's forward as a list of steps.

The child (tracer.py, convert.py) traces the reference with torch.fx and writes each node as a
`Step` whose arguments are references to earlier steps, literals, or host expressions the port's
forward evaluates at run time (`self.conv.stride`, `self.scaling_factor`): nothing about the
traced sizes is baked into a step except where the reference's own code fixes it (a literal
`dim=1`). The parent (emit.py) writes the steps as Python without importing the reference.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

ArgKind = Literal["ref", "lit", "host", "list", "tuple", "dtype", "slice", "ellipsis"]
StepKind = Literal["input", "host", "pointwise", "call", "method", "function", "getattr", "getitem", "operator",
                   "alias", "output"]


class Arg(BaseModel):
    """An argument: `ref` an earlier step's id, `lit` a Python literal, `host` an expression over `self`,
    `list`/`tuple`/`slice` nested args, `dtype` a torch dtype's name, `ellipsis` the `...` of an index."""

    kind: ArgKind
    value: Any = None

    @model_validator(mode="after")
    def _nested(self) -> Arg:
        """Nested args come back from JSON as dicts: make them Args again."""
        if self.kind in ("list", "tuple", "slice") and isinstance(self.value, list):
            self.value = [v if isinstance(v, Arg) else Arg.model_validate(v) for v in self.value]
        return self


class Step(BaseModel):
    """One value of the traced forward.

    kinds: `input` (a forward argument), `host` (a model attribute: parameter, buffer or number),
    `pointwise` (an elementwise op, fused with its neighbours by emit.py), `call` (a runtime/
    launcher: convolution, GEMM, reduction, norm, pool), `method` / `function` / `getattr` /
    `getitem` / `operator` (data movement, views, shapes and Python arithmetic on sizes, written as
    they are), `alias` (the value of another step), `output` (what forward returns).
    """

    id: str
    kind: StepKind
    op: str = ""
    args: list[Arg] = Field(default_factory=list)
    kwargs: dict[str, Arg] = Field(default_factory=dict)
    params: dict[str, Arg] = Field(default_factory=dict)
    """Pointwise hyperparameters (a LeakyReLU slope, clamp bounds), each a literal or a host value."""
    attrs: dict[str, Any] = Field(default_factory=dict)
    """Pointwise static attributes (GELU's `approximate`)."""
    inplace: bool = False
    tensor: bool = False
    shape: list[int] = Field(default_factory=list)
    dtype: str | None = None
    users: list[str] = Field(default_factory=list)


class GeneralGraph(BaseModel):
    """The reference's forward as steps, in execution order; or why it cannot be written."""

    inputs: list[str] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    extern: list[str] = Field(default_factory=list)
    """torch calls the general path keeps (a random seed for dropout): the allowance it needs."""
    notes: list[str] = Field(default_factory=list)
    reason: str = ""
    """Why there is no graph (empty when there is one): the construct the tracer could not express."""

    def step(self, step_id: str) -> Step:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)
