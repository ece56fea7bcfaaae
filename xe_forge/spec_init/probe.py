"""`xe-forge spec init`'s probe, in a process of its own (`python -m xe_forge.spec_init.probe REQUEST.json`):
the problem file is imported here, never in the CLI's process.

1. Binding (spec_init/bind.py): each input size and constructor argument as an expression over
   the module constant that drives it, found by rebinding the constants.
2. `ci`: sizes shrunk for the interpreter (batch-like sizes to ~11, feature sizes to ~67, odd first,
   then multiples of 8, 32, 128 until the reference accepts them and the kernel matches it).
3. `unseen`: the input-only sizes made smaller and larger, kept where the kernel still matches.
4. `flop`: torch's FLOP counter on the meta device; a formula over the dims when one monomial fits.
"""

from __future__ import annotations

import ast
import math
import sys
import traceback
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from xe_forge.errors import SignatureMismatch
from xe_forge.spec_init.bind import Loader, bind

GEOMETRY_TOKENS = {"kernel", "ksize", "stride", "padding", "pad", "dilation", "pool", "window"}  # never shrunk
COUNT_TOKENS = {"group", "groups", "heads", "head"}  # shrunk only together with what they divide
BATCH_LIKE_TARGET, FEATURE_TARGET = 11, 67  # odd: off every power-of-two tile
SPATIAL_TARGET = 7  # batch-like target when three or more input-only dims multiply (N, D, H, W)
SCALINGS = 4  # power-of-two scalings tried when no ladder level passes
RTOL = ATOL = 1e-3  # a sanity bound; `xe-forge check` applies the real precision contract


class ProbeRequest(BaseModel):
    kernel: str
    reference: str | None = None  # None: the kernel is its own reference
    workdir: str
    result: str


class InputFact(BaseModel):
    name: str
    shape: list[str | int]
    dtype: str
    dist: Literal["normal", "uniform"] = "normal"


class InitFact(BaseModel):
    name: str
    value: Any  # a dim expression, a literal, or a list of them


class GeneratedShape(BaseModel):
    name: str  # what it varies: "HIDDEN larger, others smaller"
    dims: dict[str, int | float]


class ProbeResult(BaseModel):
    dims: dict[str, int] = Field(default_factory=dict, description="dim -> the file's own value")
    constants: dict[str, str] = Field(default_factory=dict, description="dim -> the module constant it binds")
    inputs: list[InputFact] = Field(default_factory=list)
    inits: list[InitFact] = Field(default_factory=list)
    dtype: str = "float32"
    ci: dict[str, int] = Field(default_factory=dict)
    ci_error: str | None = Field(None, description="why no small size passed (the spec still uses the smallest)")
    unseen: list[dict[str, int]] = Field(default_factory=list)
    generated: list[GeneratedShape] = Field(default_factory=list, description="the unseen shapes `check` adds "
                                            "across the kernel's tiles (verify/shapes.py, the same planner)")
    multiple_of: dict[str, int] = Field(default_factory=dict, description="dim -> the step the kernel needs")
    flop: str | None = None
    flop_ci: float | None = None
    flop_full: float | None = None
    checked: str = ""
    notes: list[str] = Field(default_factory=list)
    error: str | None = None
    hint: str | None = None




# ---------------------------------------------------------------- the spec skeleton

def _signature(source: str) -> tuple[list[str], list[str]]:
    """forward's and __init__'s parameter names (without self) of the file's Model/ModelNew."""
    from xe_forge.problem.kernel import MODEL_CLASSES

    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    cls = next((classes[c] for c in MODEL_CLASSES if c in classes), None)
    found: dict[str, list[str]] = {"forward": [], "__init__": []}
    for node in cls.body if cls else []:
        if isinstance(node, ast.FunctionDef) and node.name in found:
            found[node.name] = [a.arg for a in node.args.args[1:]]
    return found["forward"], found["__init__"]


def skeleton(loader: Loader, result: ProbeResult) -> None:
    import torch

    dim_of, exprs, full, inputs, inits = bind(loader)
    forward_names, init_names = _signature(loader.source)
    result.dims, result.constants = full, dim_of
    floats = set()
    for i, x in enumerate(inputs):
        if not torch.is_tensor(x):
            raise ValueError(f"get_inputs() item {i} is a {type(x).__name__}, not a tensor: the spec format has "
                             "tensor inputs only (docs/SPEC.md)")
        name = forward_names[i] if i < len(forward_names) else f"x{i}"  # positional: the i-th parameter
        dtype = str(x.dtype).removeprefix("torch.")
        floats |= {dtype} if x.is_floating_point() else set()
        result.inputs.append(InputFact(name=name, shape=[exprs.get(f"in{i}.{j}", int(s)) for j, s in enumerate(x.shape)],
                                       dtype=dtype))
    result.dtype = next(iter(floats)) if len(floats) == 1 else "float32"
    for i, a in enumerate(inits):
        name = init_names[i] if i < len(init_names) else f"arg{i}"  # positional: the i-th parameter
        if isinstance(a, bool) or isinstance(a, float):
            value: Any = a
        elif isinstance(a, int):
            value = exprs.get(f"init{i}", a)
        elif isinstance(a, tuple | list) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in a):
            value = [exprs.get(f"init{i}.{j}", v) for j, v in enumerate(a)]
        else:
            raise ValueError(f"get_init_inputs() item {i} ({name}) is {a!r}: the spec format has numbers and lists "
                             "of numbers only (docs/SPEC.md)")
        result.inits.append(InitFact(name=name, value=value))


def spec_for(result: ProbeResult, dims: dict[str, int], *, with_unseen: bool = False):
    """The spec being written, with `dims` as its ci variant (and its unseen shapes and multiples if asked)."""
    from xe_forge.problem.spec import InputSpec, Spec, Variant

    inputs = {i.name: InputSpec(shape=i.shape, dtype=None if i.dtype == result.dtype else i.dtype, dist=i.dist)
              for i in result.inputs}
    extra = {"unseen": [Variant(dims=u) for u in result.unseen], "multiple_of": result.multiple_of} if with_unseen else {}
    return Spec(inputs=inputs, inits=[(i.name, i.value) for i in result.inits],
                variants={"ci": [Variant(dtype=result.dtype, dims=dims)]}, **extra)


# ---------------------------------------------------------------- checking sizes

def _flatten(out: Any) -> list[Any]:
    return [t for o in out for t in _flatten(o)] if isinstance(out, tuple | list) else [out]


def _model(module, init: list[Any]):
    import torch

    from xe_forge.problem.cases import model_class

    torch.manual_seed(0)
    return model_class(module)(*init)


def check_dims(result: ProbeResult, ref_mod, kernel_mod, dims: dict[str, int]) -> str | None:
    """None when the reference runs at `dims` (finite output) and the kernel matches it; else why not."""
    import torch

    from xe_forge.problem.cases import build_case

    try:
        spec = spec_for(result, dims)
        case = build_case(ref_mod, spec, spec.variant("ci"), seed=0, device="cpu")
        ref = _model(ref_mod, case.init_args)
        with torch.no_grad():
            want = _flatten(ref(*[x.clone() if torch.is_tensor(x) else x for x in case.inputs]))
        if not all(torch.isfinite(w).all() for w in want if torch.is_tensor(w)):
            return "the reference output is not finite"
        if kernel_mod is None:
            return None
        cand = _model(kernel_mod, case.init_args)
        try:
            cand.load_state_dict(ref.state_dict())
        except RuntimeError:
            pass  # other parameter names: both were built under the same seed
        with torch.no_grad():
            got = _flatten(cand(*case.inputs))
        for g, w in zip(got, want, strict=True):
            if torch.is_tensor(w) and (g.shape != w.shape or not torch.allclose(g.float(), w.float(), RTOL, ATOL)):
                return f"the kernel's output differs from the reference's at {dims}"
        return None
    except Exception as exc:  # a size the problem rejects, a kernel that needs aligned sizes
        return f"{type(exc).__name__}: {str(exc)[:300]}"


def _tokens(name: str) -> set[str]:
    return {t for t in name.lower().split("_") if t}


def ladder(name: str, value: int, target: int) -> list[int]:
    """Candidate ci sizes, smallest first: odd, then multiples of 8, 32 and 128, never above the file's."""
    if value <= 8 or _tokens(name) & (GEOMETRY_TOKENS | COUNT_TOKENS):
        return [value]
    c = min(value, target)
    steps = [c if c % 2 else c - 1, -(-c // 8) * 8, -(-max(c, 32) // 32) * 32, -(-max(c, 128) // 128) * 128]
    out: list[int] = []
    for s in steps:
        s = min(s, value)
        if s not in out:
            out.append(s)
    return out


def scaled(result: ProbeResult, shift: int) -> dict[str, int]:
    """Every size (group and head counts too) divided by 2**shift where it divides: ratios, and with them
    divisibility (channels by groups), are kept; geometry (kernel, stride, padding) is not touched."""
    out = {}
    for d, v in result.dims.items():
        geometry = _tokens(result.constants[d]) & GEOMETRY_TOKENS
        out[d] = max(1, v >> shift) if v > 8 and not geometry else v
    return out


def candidates(result: ProbeResult, batch_like: set[str]) -> tuple[dict[str, list[int]], list[dict[str, int]]]:
    """The per-dim ladders, and the ci candidates to try in order: ladder levels, then common scalings."""
    target = SPATIAL_TARGET if len(batch_like) >= 3 else BATCH_LIKE_TARGET
    ladders = {d: ladder(c, result.dims[d], target if d in batch_like else FEATURE_TARGET)
               for d, c in result.constants.items()}
    levels = max((len(x) for x in ladders.values()), default=1)
    tries = [{d: x[min(k, len(x) - 1)] for d, x in ladders.items()} for k in range(levels)]
    top = max(result.dims.values(), default=1)
    shift = max(1, top.bit_length() - 7)  # the largest size in [64, 128), then smaller, then larger
    tries += [scaled(result, s) for s in (shift, shift + 1, shift - 1, shift + 2)[:SCALINGS] if s >= 1]
    unique: list[dict[str, int]] = []
    for t in tries:
        if t not in unique and t != result.dims:  # the file's own sizes: too slow for the interpreter
            unique.append(t)
    return ladders, unique


def choose_ci(result: ProbeResult, ref_mod, kernel_mod, batch_like: set[str]) -> None:
    ladders, tries = candidates(result, batch_like)
    error = "no size smaller than the file's own to try"
    for k, dims in enumerate(tries):
        error = check_dims(result, ref_mod, kernel_mod, dims)
        if error is None:
            if k:
                for d, x in ladders.items():  # lower each dim on its own where the others allow it
                    for lower in (v for v in x if v < dims[d]):
                        if check_dims(result, ref_mod, kernel_mod, {**dims, d: lower}) is None:
                            dims[d] = lower
                            break
            result.ci = dims
            return
    result.ci, result.ci_error = (tries[0] if tries else dict(result.dims)), error


def choose_multiples(result: ProbeResult, ref_mod, kernel_mod) -> None:
    """The steps a kernel needs: a ci dim at a multiple of 8 where one more fails the kernel but not the
    reference is held to the smallest of 8, 32, 128 that passes one step up (the verifier's unseen shapes
    keep it so; without this they would fail a port that asserts aligned sizes)."""
    if kernel_mod is None:
        return
    for d, v in result.ci.items():
        if v <= 8 or v % 8 or _tokens(result.constants[d]) & (GEOMETRY_TOKENS | COUNT_TOKENS):
            continue
        if check_dims(result, ref_mod, None, {**result.ci, d: v + 1}) is not None:
            continue  # the reference's own constraint: the verifier asks the reference
        if check_dims(result, ref_mod, kernel_mod, {**result.ci, d: v + 1}) is None:
            continue
        step = next((m for m in (8, 32, 128) if v % m == 0
                     and check_dims(result, ref_mod, kernel_mod, {**result.ci, d: v + m}) is None), None)
        if step is not None:
            result.multiple_of[d] = step


def choose_unseen(result: ProbeResult, ref_mod, kernel_mod, batch_like: set[str]) -> None:
    """Every input-only size smaller than ci, then the first one (the batch) larger; each size kept only
    where the kernel still matches (growing one dim keeps the check cheap under the interpreter)."""
    free = [d for d in result.constants if d in batch_like and result.ci[d] > 2 and result.ci[d] != result.dims[d]]
    smaller = {d: max(1, result.ci[d] // 2) | 1 for d in free}
    larger = {d: 2 * result.ci[d] + 3 for d in free[:1]}
    for entry in (smaller, larger):
        entry = {d: v for d, v in entry.items() if check_dims(result, ref_mod, kernel_mod, {**result.ci, d: v}) is None}
        if entry and check_dims(result, ref_mod, kernel_mod, {**result.ci, **entry}) is None:
            result.unseen.append(entry)


def choose_generated(result: ProbeResult, ref_mod, workdir: Path) -> None:
    """The unseen shapes `check` will add on top of the spec's: the verifier's own planner, asked here, so
    `spec init` says (and the spec lists) every unseen shape `check` runs."""
    from xe_forge.verify.shapes import plan_shapes

    spec = spec_for(result, result.ci, with_unseen=True)
    cases, _ = plan_shapes(ref_mod, spec, spec.variant("ci"), workdir)
    result.generated = [GeneratedShape(name=c.info.origin, dims=c.info.dims) for c in cases if c.info.origin != "spec"]


def check_inits(result: ProbeResult, kernel_mod, ref_mod, request: ProbeRequest) -> None:
    """The spec's inits and inputs (the kernel file's get_init_inputs() and get_inputs()) must build both models
    and call both forwards: a SignatureMismatch, which `spec init` reports without writing a spec."""
    from xe_forge.problem.cases import model_class
    from xe_forge.problem.signature import check_classes

    check_classes(model_class(kernel_mod), model_class(ref_mod) if request.reference else None, request.kernel,
                  request.reference, {"constructor": len(result.inits), "forward": len(result.inputs)})


# ---------------------------------------------------------------- FLOPs

def _flops(result: ProbeResult, module, dims: dict[str, int]) -> float | None:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from xe_forge.problem.spec import init_args, input_shapes

    try:
        spec = spec_for(result, dims)
        variant = spec.variant("ci")
        dtypes = {i.name: getattr(torch, i.dtype) for i in result.inputs}
        inputs = [torch.empty(s, dtype=dtypes[n], device="meta") for n, s in input_shapes(spec, variant).items()]
        with torch.device("meta"):
            model = _model(module, init_args(spec, variant))
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(*inputs)
        return float(counter.get_total_flops())
    except Exception:
        return None


def choose_flop(result: ProbeResult, module) -> None:
    """A monomial `k*A*B*C` where doubling each dim scales the count by a power of two, else literals."""
    base = _flops(result, module, result.ci)
    full = _flops(result, module, result.dims)
    if not base:
        return
    result.flop_ci, result.flop_full = base, full
    powers: dict[str, int] = {}
    for d in result.ci:
        doubled = _flops(result, module, {**result.ci, d: 2 * result.ci[d]})
        ratio = (doubled or 0) / base
        e = round(math.log2(ratio)) if ratio > 0 else -1
        if e not in (0, 1, 2, 3) or abs(ratio - 2**e) > 1e-9 * ratio:
            return
        powers[d] = e
    k = base / math.prod(result.ci[d] ** e for d, e in powers.items())
    formula = lambda dims: round(k) * math.prod(dims[d] ** e for d, e in powers.items())  # noqa: E731
    if abs(k - round(k)) > 1e-9 * k or (full and formula(result.dims) != full):
        return
    terms = [str(round(k))] if round(k) != 1 else []
    terms += [d if e == 1 else f"{d}**{e}" for d, e in powers.items() if e]
    result.flop = "*".join(terms) or None


# ---------------------------------------------------------------- the probe

def probe(request: ProbeRequest) -> ProbeResult:
    import torch

    result = ProbeResult()
    kernel = Loader(Path(request.kernel), Path(request.workdir))
    skeleton(kernel, result)
    kernel_mod = kernel.module()
    ref_mod = Loader(Path(request.reference), Path(request.workdir)).module() if request.reference else kernel_mod
    check_inits(result, kernel_mod, ref_mod, request)
    other = kernel_mod if request.reference else None
    in_inits = {n.id for i in result.inits for v in (i.value if isinstance(i.value, list) else [i.value])
                if isinstance(v, str) for n in ast.walk(ast.parse(v, mode="eval")) if isinstance(n, ast.Name)}
    batch_like = set(result.constants) - in_inits
    choose_ci(result, ref_mod, other, batch_like)
    result.checked = "the reference, and the kernel against it" if other is not None else "the file on its own"
    if result.ci_error is None:
        choose_multiples(result, ref_mod, other)
        choose_unseen(result, ref_mod, other, batch_like)
        choose_generated(result, ref_mod, Path(request.workdir))
    sample = kernel.module({c: result.ci[d] for d, c in result.constants.items()})
    for fact, x in zip(result.inputs, sample.get_inputs(), strict=True):
        if torch.is_tensor(x) and x.is_floating_point() and x.numel() > 16 and x.min() >= 0 and x.max() <= 1:
            fact.dist = "uniform"
    choose_flop(result, ref_mod)
    return result


def main(path: str) -> int:
    request = ProbeRequest.model_validate_json(Path(path).read_text())
    try:
        result = probe(request)
    except SignatureMismatch as exc:
        result = ProbeResult(error=exc.message, hint=exc.hint)
    except Exception as exc:
        result = ProbeResult(error=f"{type(exc).__name__}: {exc}", notes=[traceback.format_exc()[-2000:]])
    Path(request.result).write_text(result.model_dump_json(indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
