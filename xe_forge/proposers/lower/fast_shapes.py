"""Which shapes get a fast path: the problem's own, and any more the user asks for (`port --shapes`).

Each request is lowered and autotuned at its own shapes and dispatched the same way (a fast path
serves only the signature it was lowered for). A request is a spec variant's name (`bench-gpu`), or
dims over the problem's variant (`BATCH=64,HW=32`); without a spec, dims rename the reference's
module constants (`batch_size=64`), rewritten in a copy of its source as unseen shapes do.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xe_forge.errors import InputError
from xe_forge.problem.constants import module_constants, rewrite_constants
from xe_forge.problem.kernel import Problem
from xe_forge.problem.spec import Spec, Variant


class ShapeRequest(BaseModel):
    """One lowering to make: which reference file, spec and variant fix its shapes."""

    label: str
    reference_path: str
    reference_source: str
    spec: dict[str, Any] | None = None
    variant: str | None = None

    def spec_model(self) -> Spec | None:
        return Spec(**self.spec) if self.spec else None


def main_request(problem: Problem) -> ShapeRequest:
    spec = problem.spec.model_dump(mode="json") if problem.spec else None
    return ShapeRequest(label=problem.spec.variant_name(problem.variant) if problem.spec else "default",
                        reference_path=str(problem.reference.path), reference_source=problem.reference.source,
                        spec=spec, variant=problem.variant)


def parse_dims(text: str) -> dict[str, int]:
    dims: dict[str, int] = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        if not eq or not name.strip() or not value.strip().lstrip("-").isdigit():
            raise InputError(f"--shapes {text!r}: expected NAME=INT[,NAME=INT...] or a spec variant's name")
        dims[name.strip()] = int(value)
    return dims


def requests(problem: Problem, shapes: list[str], workdir: Path) -> list[ShapeRequest]:
    """The problem's own request first, then one per `--shapes` entry (duplicates dropped)."""
    out = [main_request(problem)]
    for i, text in enumerate(s.strip() for s in shapes if s.strip()):
        out.append(_request(problem, text, i + 1, workdir))
    seen: list[tuple[str, Any, Any]] = []
    unique = []
    for req in out:
        key = (req.reference_source, req.spec and _variant_of(req).model_dump(), req.variant if not req.spec else None)
        if key not in seen:
            seen.append(key)
            unique.append(req)
    return unique


def _variant_of(req: ShapeRequest) -> Variant:
    spec = req.spec_model()
    assert spec is not None
    return spec.variant(req.variant)


def _request(problem: Problem, text: str, index: int, workdir: Path) -> ShapeRequest:
    base = main_request(problem)
    if problem.spec is not None:
        if "=" not in text:
            if text not in problem.spec.variants:
                raise InputError(f"--shapes {text!r}: the spec has no such variant",
                                 hint=f"variants declared: {', '.join(problem.spec.variants)}")
            return base.model_copy(update={"label": text, "variant": text})
        dims = parse_dims(text)
        variant = problem.spec.variant(problem.variant)
        unknown = sorted(set(dims) - set(variant.dims))
        if unknown:
            raise InputError(f"--shapes {text!r}: the variant has no dims {', '.join(unknown)}",
                             hint=f"its dims: {', '.join(variant.dims)}")
        name = f"fast-{index}"
        merged = Variant(**{**variant.model_dump(), "dims": {**variant.dims, **dims}})
        spec = dict(base.spec or {})
        spec["variants"] = {**spec.get("variants", {}), name: [merged.model_dump(mode="json")]}
        return base.model_copy(update={"label": text, "spec": spec, "variant": name})
    dims = parse_dims(text)
    constants = module_constants(problem.reference.source)
    unknown = sorted(set(dims) - set(constants))
    if unknown:
        raise InputError(f"--shapes {text!r}: the reference has no module constants {', '.join(unknown)}",
                         hint=f"its constants: {', '.join(constants) or 'none'}")
    source = rewrite_constants(problem.reference.source, dims)
    path = workdir / f"{Path(problem.reference.path).stem}_{hashlib.sha256(source.encode()).hexdigest()[:12]}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return base.model_copy(update={"label": text, "reference_path": str(path), "reference_source": source})
