"""General-path steps -> the body of a forward and the module-level code it needs.

Pointwise steps are grouped (consecutive, same shape) into generated kernels (pointwise.py); every
other step is one line: a runtime launcher call, a view, a size read, Python arithmetic on sizes.
The module-level code is the runtime functions the body calls (library.py), the expression
helpers the pointwise kernels call (fusion/expr.py) and the generated kernels with their launchers.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from xe_forge.proposers.fusion.expr import helper_source
from xe_forge.proposers.lower.general import library
from xe_forge.proposers.lower.general.models import Arg, GeneralGraph, Step
from xe_forge.proposers.lower.general.pointwise import PointwiseError, literal, write_group

OPERATORS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "div": "/", "floordiv": "//", "mod": "%",
             "pow": "**", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and_": "&",
             "or_": "|", "iadd": "+", "isub": "-", "imul": "*", "itruediv": "/", "matmul": "@"}
UNARY_OPERATORS = {"neg": "-", "invert": "~", "not_": "not "}


class EmitError(Exception):
    """A step the emitter cannot write; the message names it."""


class GeneralCode(BaseModel):
    """What the general path adds to a port: forward's body, module-level code, its kernels' names."""

    body: list[str]
    definitions: str
    kernels: list[str] = Field(default_factory=list)
    extern: list[str] = Field(default_factory=list)


def render(arg: Arg) -> str:
    if arg.kind == "ref" or arg.kind == "host" or arg.kind == "dtype":
        return str(arg.value)
    if arg.kind == "lit":
        return literal(arg.value) if isinstance(arg.value, float) else repr(arg.value)
    if arg.kind == "list":
        return "[" + ", ".join(render(a) for a in arg.value) + "]"
    if arg.kind == "tuple":
        items = [render(a) for a in arg.value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if arg.kind == "ellipsis":
        return "..."
    raise EmitError(f"a {arg.kind} argument outside an index")


def render_index(arg: Arg) -> str:
    if arg.kind == "tuple":
        return ", ".join(render_index(a) for a in arg.value) if arg.value else "()"
    if arg.kind == "slice":
        start, stop, step = (render(a) if not (a.kind == "lit" and a.value is None) else "" for a in arg.value)
        return f"{start}:{stop}" + (f":{step}" if step else "")
    return render(arg)


def _call(step: Step) -> str:
    args = [render(a) for a in step.args] + [f"{k}={render(v)}" for k, v in step.kwargs.items()]
    return ", ".join(args)


def _line(step: Step) -> str | None:
    target = step.id
    if step.kind == "input":
        return None
    if step.kind == "host":
        return f"{target} = {step.op}"
    if step.kind == "call":
        return f"{target} = {step.op}({_call(step)})"
    if step.kind == "function":
        return f"{target} = torch.{step.op}({_call(step)})"
    if step.kind == "method":
        rest = Step(id="", kind="call", args=step.args[1:], kwargs=step.kwargs)
        return f"{target} = {render(step.args[0])}.{step.op}({_call(rest)})"
    if step.kind == "getattr":
        return f"{target} = {render(step.args[0])}.{step.op}"
    if step.kind == "getitem":
        return f"{target} = {render(step.args[0])}[{render_index(step.args[1])}]"
    if step.kind == "operator":
        if len(step.args) == 1:
            return f"{target} = {UNARY_OPERATORS.get(step.op, '-')}{render(step.args[0])}"
        if step.op not in OPERATORS:
            raise EmitError(f"the Python operator `{step.op}`")
        return f"{target} = {render(step.args[0])} {OPERATORS[step.op]} {render(step.args[1])}"
    if step.kind == "output":
        return f"return {render(step.args[0])}"
    raise EmitError(f"a {step.kind} step")


def emit_general(graph: GeneralGraph) -> GeneralCode:
    """The general path of a traced reference; raises EmitError (or PointwiseError) for what it cannot write."""
    steps = {s.id: s for s in graph.steps}
    body: list[str] = []
    generated: list[str] = []
    runtime: set[str] = set()
    needs: set[str] = set()
    kernels: list[str] = []
    run: list[Step] = []

    def flush() -> None:
        if not run:
            return
        members = list(run)
        run.clear()
        if not any(any(u not in {m.id for m in members} for u in m.users) for m in members):
            return  # nothing it computes is used
        index = len(kernels)
        kernel, launcher, call, group = write_group(index, members, steps, render)
        generated.extend([kernel, launcher])
        kernels.append(f"xfg_pw{index}_kernel")
        body.append(call)
        runtime.update(group.runtime)
        needs.update(group.needs)

    for step in graph.steps:
        if step.kind == "pointwise":
            if run and (step.shape != run[-1].shape or step.inplace or run[-1].inplace):
                flush()
            run.append(step)
            continue
        flush()
        line = _line(step)
        if line is not None:
            body.append(line)
        if step.kind == "call":
            runtime.add(step.op)
    flush()
    if not body or not body[-1].startswith("return"):
        raise EmitError("the traced forward returns nothing")
    names = library.closure(runtime)
    kernels += [n for n in names if library.definitions()[n][1].lstrip().startswith("@triton.jit")
                and n.endswith("_kernel")]
    definitions = "\n\n\n".join(p for p in (library.source(runtime), helper_source(needs), *generated) if p)
    return GeneralCode(body=body, definitions=definitions, kernels=sorted(kernels), extern=graph.extern)


__all__ = ["EmitError", "GeneralCode", "PointwiseError", "emit_general", "render"]
