"""Which calls a fast path may serve: the signature it was lowered and autotuned for, checked per call.

A lowering holds only where everything TorchInductor assumed holds. The record says what it saw:
each graph input's size, stride and dtype and each size's value (the wrapper's own `get_args()`),
the device it ran on, the shape guards of Dynamo's shape environment (guards.py), and the model's
configuration (stride, padding, groups, eps, training flags: every literal module attribute the
graph may have specialized on). A fast path's `accepts` function checks all of it before the
fast path runs, on the live model and the call's own tensors; any mismatch sends the call to the
general path. `exact` (the default) also pins every size to the one autotuned for; `dynamic`
serves any sizes the lowering's own size and stride asserts and guards admit.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from xe_forge.proposers.lower.guards import python_guard
from xe_forge.proposers.lower.models import Lowering, PackagingError
from xe_forge.proposers.lower.sources import source_expr
from xe_forge.proposers.lower.wrapper import Wrapper

Mode = Literal["exact", "dynamic"]
ALIGNMENT = 16  # Inductor marks pointer arguments 16-byte aligned when the example inputs were
"""Module attributes that only restate a weight's shape (checked through the weight itself)."""


class TensorSig(BaseModel):
    source: str  # the expression reading it in forward: `self.conv.weight`, `x`
    shape: list[int]
    stride: list[int]
    dtype: str


class Signature(BaseModel):
    """What one lowering was made for, read from its record."""

    tensors: list[TensorSig] = Field(default_factory=list)
    sizes: dict[str, int] = Field(default_factory=dict)  # size graph inputs: source -> value
    scalars: list[str] = Field(default_factory=list)  # Python numbers passed at run time (not pinned)
    device: str = "cuda"
    dtype: str = "float32"

    def describe(self) -> str:
        shapes = ", ".join(f"{t.source} {tuple(t.shape)}" for t in self.tensors if not t.source.startswith("self."))
        return f"{self.dtype} on {self.device}: {shapes or 'no tensor inputs'}"


def signature(lowering: Lowering, wrapper: Wrapper) -> Signature:
    """The example inputs the lowering was compiled and autotuned with (`get_args()` of its wrapper)."""
    examples = _get_args(lowering.codes[0])
    placeholders = lowering.placeholders or []
    if len(examples) != len(placeholders):
        raise PackagingError(f"the wrapper's get_args() lists {len(examples)} inputs, the record {len(placeholders)} "
                             "graph inputs")
    sig = Signature(dtype=lowering.dtype)
    for ph, example in zip(placeholders, examples, strict=True):
        expr = source_expr(ph.source)
        if ph.kind == "scalar":
            sig.scalars.append(expr)
        elif ph.kind == "symint":
            if not isinstance(example, int):
                raise PackagingError(f"size input {expr}: get_args() gives {example!r}")
            sig.sizes[expr] = example
        else:
            if not isinstance(example, dict):
                raise PackagingError(f"tensor input {expr}: get_args() gives {example!r}")
            sig.tensors.append(TensorSig(source=expr, **example))
            if example.get("device_type") not in (None, "cpu"):
                sig.device = example["device_type"]
    return sig


def _get_args(code: str) -> list[Any]:
    """Each entry of get_args(): an int, or {shape, stride, dtype, device_type} for rand_strided(...)."""
    tree = ast.parse(code)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_args"), None)
    if fn is None:
        raise PackagingError("the wrapper has no get_args(): the lowered signature is unknown")
    values: dict[str, Any] = {}
    order: list[str] = []
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if isinstance(value, ast.Constant):
                values[name] = value.value
            elif isinstance(value, ast.Call) and ast.unparse(value.func).endswith("rand_strided"):
                keywords = {k.arg: k.value for k in value.keywords}
                device = ast.literal_eval(keywords["device"]) if "device" in keywords else "cuda"
                values[name] = {"shape": list(ast.literal_eval(value.args[0])),
                                "stride": list(ast.literal_eval(value.args[1])),
                                "dtype": ast.unparse(keywords.get("dtype", ast.Constant("torch.float32"))),
                                "device_type": str(device).split(":")[0]}
            else:
                values[name] = None
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.List):
            order = [e.id for e in stmt.value.elts if isinstance(e, ast.Name)]
    return [values.get(n) for n in order]


def config_conditions(config: dict[str, Any], dynamic: set[str]) -> list[str]:
    """`self.conv.stride == (1, 1)` for each recorded module attribute the graph did not take as an input."""
    return [f"{expr} == {value}" for expr, value in sorted(config.items()) if expr not in dynamic]


def accepts_source(name: str, sig: Signature, *, params: list[str], config: dict[str, Any], guards: list[str],
                   kinds: list[str], mode: Mode, wrapper: Wrapper | None = None,
                   lowering: Lowering | None = None) -> tuple[str, list[str]]:
    """The `accepts` function of one fast path, and the guards it could not check (notes)."""
    lines = [f"def {name}(self, {', '.join(params)}):",
             f'    """Whether this call has the signature the fast path was lowered for ({sig.describe()})."""']
    kinds_text = repr(tuple(kinds))
    for i, t in enumerate(sig.tensors):
        var = f"t{i}"
        cond = [f"not torch.is_tensor({var})", f"{var}.device.type not in {kinds_text}",
                f"{var}.dtype != {t.dtype}", f"{var}.data_ptr() % {ALIGNMENT} != 0"]
        if mode == "exact":
            cond += [f"tuple({var}.shape) != {tuple(t.shape)!r}", f"tuple({var}.stride()) != {tuple(t.stride)!r}"]
        lines += [f"    {var} = {t.source}", f"    if {' or '.join(cond)}:", "        return False"]
    if mode == "exact":
        lines += [f"    if {expr} != {value}:\n        return False" for expr, value in sig.sizes.items()]
    else:
        lines += _dynamic_shape_lines(sig, wrapper, lowering)
    skipped = []
    roots = {"self", *params}
    for guard in guards:
        text = python_guard(guard, roots)
        if text is None:
            skipped.append(guard)
            continue
        lines += [f"    if not ({text}):", "        return False"]
    if skipped and mode == "dynamic":
        raise PackagingError(f"guards the port cannot check: {'; '.join(skipped[:3])}: serve it exactly instead")
    lines += [f"    if not ({cond}):\n        return False" for cond in config_conditions(config, set(sig.scalars))]
    lines.append("    return True")
    return "\n".join(lines) + "\n", skipped


def _dynamic_shape_lines(sig: Signature, wrapper: Wrapper | None, lowering: Lowering | None) -> list[str]:
    """The lowering's own asserts (sizes and strides in its symbols) as conditions; every symbol >= 2."""
    if wrapper is None or lowering is None:
        raise PackagingError("a dynamic fast path needs the wrapper's asserts")
    placeholders = lowering.placeholders or []
    sources = {n: source_expr(p.source) for n, p in zip(wrapper.arg_names, placeholders, strict=True)}
    tensors = {n for n, p in zip(wrapper.arg_names, placeholders, strict=True) if p.kind == "tensor"}
    lines, symbols = [], []
    for stmt in wrapper.call.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in sources and \
                isinstance(stmt.targets[0], ast.Name) and re.fullmatch(r"[su]\d+", stmt.targets[0].id):
            symbols.append(stmt.targets[0].id)
            lines.append(f"    {stmt.targets[0].id} = {sources[stmt.value.id]}")
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                ast.unparse(stmt.value.func) == "assert_size_stride":
            tensor, size, stride = stmt.value.args[:3]
            expr = sources.get(ast.unparse(tensor)) if ast.unparse(tensor) in tensors else None
            if expr is not None:
                lines += [f"    if tuple({expr}.shape) != {ast.unparse(size)} or "
                          f"tuple({expr}.stride()) != {ast.unparse(stride)}:", "        return False"]
    ranges = lowering.ranges
    for symbol in symbols:
        source = next(line.split(" = ", 1)[1] for line in lines if line.startswith(f"    {symbol} = "))
        lo, hi = ranges.get(source, [2, None])
        lines += [f"    if {symbol} < {lo}" + (f" or {symbol} > {hi}" if hi is not None else "") + ":",
                  "        return False"]
    return lines
