"""Unseen shapes in the reference process: the spec's own, plus tile-crossing ones probed on the reference.

Whether the reference accepts a shape is asked on the meta device (shapes only, no data, no time);
an operator without a meta kernel falls back to a real run when the shape is small. Without a spec
the module's constants are rewritten in its source and the result imported as a new module, so
constants derived from them follow.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from xe_forge.problem.cases import import_from_path, model_class
from xe_forge.problem.constants import module_constants, rewrite_constants
from xe_forge.problem.spec import Spec, Variant, init_args, input_shapes
from xe_forge.problem.unseen import ShapeProbe, plan_unseen
from xe_forge.verify.protocol import ShapeInfo

REAL_PROBE_LIMIT = 1 << 22  # elements: above this a shape the meta device cannot judge is not used


@dataclass
class ShapeCase:
    info: ShapeInfo
    module: ModuleType
    variant: Variant | None
    int_highs: dict[str, int] | None = None  # the index ranges the reference accepts (judge._int_highs)


def plan_shapes(module: ModuleType, spec: Spec | None, variant: Variant | None, workdir: Path,
                tiles: list[int] = (), seed: int | None = None) -> tuple[list[ShapeCase], dict[str, str]]:
    """The unseen cases for a problem, numbered, and the dims no generated shape could vary; `tiles`
    are the block sizes and loop steps the candidate launched with."""
    cases: list[ShapeCase] = []
    seen: list[dict[str, Any]] = []

    def add(dims: dict[str, Any], case_module: ModuleType, case_variant: Variant | None, origin: str) -> None:
        if dims in seen:
            return
        seen.append(dims)
        n = len(cases) + 1
        digest = hashlib.sha256(repr(sorted(dims.items())).encode()).hexdigest()[:10]
        cases.append(ShapeCase(info=ShapeInfo(key=f"u{n}-{digest}", label=f"unseen {n}", dims=dims, unseen=True,
                                              origin=origin), module=case_module, variant=case_variant))

    if spec is not None and variant is not None:
        seen.append(dict(variant.dims))
        for entry in spec.unseen:
            merged = entry.merged_over(variant)
            add(dict(merged.dims), module, merged, "spec")
        plan = plan_unseen(dict(variant.dims), lambda dims: _accepts_spec(module, spec, variant, dims), tiles,
                           dict(spec.multiple_of), seed=seed)
        for shape in plan.shapes:
            add(dict(shape.dims), module, _with_dims(variant, shape.dims), shape.name)
        return cases, plan.frozen
    source = Path(module.__file__).read_text()
    constants = module_constants(source)
    seen.append(constants)
    variants: dict[str, ModuleType] = {}

    def variant_module(dims: dict[str, Any]) -> ModuleType:
        text = rewrite_constants(source, dims)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        if digest not in variants:
            path = workdir / f"reference_{digest}.py"
            path.write_text(text)
            variants[digest] = import_from_path(path, "reference")
        return variants[digest]

    plan = plan_unseen(constants, lambda dims: _accepts_module(variant_module, dims), tiles, seed=seed)
    for shape in plan.shapes:
        add(dict(shape.dims), variant_module(shape.dims), None, shape.name)
    return cases, plan.frozen


def _with_dims(variant: Variant, dims: dict[str, Any]) -> Variant:
    return Variant(**{**variant.model_dump(), "dims": dims})


def _accepts_spec(module: ModuleType, spec: Spec, variant: Variant, dims: dict[str, Any]) -> ShapeProbe | None:
    import torch

    if not spec.admits(dims):
        return None
    candidate = _with_dims(variant, dims)
    try:
        shapes = input_shapes(spec, candidate)
        init = init_args(spec, candidate)
    except Exception:
        return None

    def inputs() -> list[Any]:
        out = []
        for name, shape in shapes.items():
            dtype = getattr(torch, spec.inputs[name].dtype or "float32")
            out.append(torch.zeros(shape, dtype=dtype))
        return out

    size = sum(_numel(s) for s in shapes.values())
    return _runs(model_class(module), lambda: init, inputs, size)


def _accepts_module(variant_module: Callable[[dict[str, Any]], ModuleType], dims: dict[str, Any]) -> ShapeProbe | None:
    try:
        mod = variant_module(dims)
    except Exception:
        return None
    return _runs(model_class(mod), lambda: list(mod.get_init_inputs()), lambda: list(mod.get_inputs()), None)


def _runs(cls: type, init: Callable[[], list[Any]], inputs: Callable[[], list[Any]],
          size: int | None) -> ShapeProbe | None:
    """What the reference does at these dims (its tensors' shapes), if it builds and runs forward: on
    the meta device, else (small) for real; None where it does not."""
    import torch

    from xe_forge.verify.budget import counted_families

    try:
        with torch.device("meta"), torch.no_grad():
            args = inputs()
            model = cls(*init())
            with counted_families() as flops:  # from shapes alone (torch's FLOP formulas): free on meta
                out = model(*args)
            return _probe(args, model, out, sum(flops.values()))
    except NotImplementedError:
        pass  # an operator without a meta kernel: try for real below
    except Exception:
        return None
    try:
        with torch.no_grad():
            args = inputs()
            if (size if size is not None else sum(x.numel() for x in args if torch.is_tensor(x))) > REAL_PROBE_LIMIT:
                return None
            model = cls(*init())
            return _probe(args, model, model(*args))
    except Exception:
        return None


def _probe(args: list[Any], model: Any, out: Any, flops: float = 0.0) -> ShapeProbe:
    """The shapes of the inputs, the state and the outputs, the elements they hold, and the forward's
    FLOPs where they were counted (on the meta device)."""
    import torch

    from xe_forge.verify.compare import flatten

    tensors = [("in", x) for x in args if torch.is_tensor(x)]
    tensors += [(k, v) for k, v in model.state_dict().items() if torch.is_tensor(v)]
    tensors += [("out", o) for o in flatten(out) if torch.is_tensor(o)]
    return ShapeProbe(signature=tuple((k, tuple(t.shape)) for k, t in tensors),
                      volume=sum(int(t.numel()) for _, t in tensors), flops=flops)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n
