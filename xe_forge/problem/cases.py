"""Importing kernel files and building their inputs: the evaluation workers' side of a problem.

Nothing here runs in the parent process (it would execute user code there). Inputs come in two
distributions: the problem's own (the spec's `dist`, else what `get_inputs()` draws, usually
KernelBench's non-negative `torch.rand`) and a signed one (standard normal), so a kernel that is
wrong only for negative values fails, and a kernel is also judged on the inputs its problem uses.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel

from xe_forge.errors import InputError
from xe_forge.problem.kernel import MODEL_CLASSES
from xe_forge.problem.spec import Spec, Variant, init_args, input_shapes

Dist = Literal["problem", "signed"]
_counter = itertools.count()
_GENERATORS = {"rand": "uniform", "rand_like": "uniform", "randn": "normal", "randn_like": "normal"}


def import_from_path(path: Path | str, role: str = "kernel") -> ModuleType:
    """Import a file under a fresh module name (Triton's @jit needs a real file, exec() breaks it)."""
    path = Path(path)
    name = f"xe_forge_user_{role}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import {role} file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def model_class(module: ModuleType) -> type:
    for name in MODEL_CLASSES:
        if hasattr(module, name):
            return getattr(module, name)
    raise InputError(f"{module.__file__} defines no Model or ModelNew")


class Case(BaseModel):
    """Constructor args and forward inputs for one check, already on the device."""

    model_config = {"arbitrary_types_allowed": True}

    init_args: list[Any]
    inputs: list[Any]


def torch_dtype(name: str | None):
    import torch

    return None if name is None else getattr(torch, name)


def get_inputs_generators(source: str) -> list[str | None]:
    """What each element of `get_inputs()`'s returned list is drawn from ('uniform', 'normal', None)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    ret = next((n for n in ast.walk(fn) if isinstance(n, ast.Return)), None) if fn else None
    if ret is None or not isinstance(ret.value, ast.List | ast.Tuple):
        return []
    out = []
    for elt in ret.value.elts:
        call = elt if isinstance(elt, ast.Call) else None
        name = call.func.attr if call is not None and isinstance(call.func, ast.Attribute) else None
        out.append(_GENERATORS.get(name or ""))
    return out


def problem_dists(module: ModuleType, spec: Spec | None) -> dict[str, str]:
    """Per spec input, the problem's own distribution: the spec's `dist`, else get_inputs()'s, else uniform."""
    if spec is None:
        return {}
    try:
        drawn = get_inputs_generators(Path(module.__file__).read_text())
    except OSError:
        drawn = []
    out = {}
    for i, (name, ispec) in enumerate(spec.inputs.items()):
        out[name] = ispec.dist or (drawn[i] if i < len(drawn) and drawn[i] else "uniform")
    return out


def describe_dists(module: ModuleType, spec: Spec | None) -> dict[str, str]:
    """How the report names the two input distributions."""
    if spec is None:
        kinds = {k for k in get_inputs_generators(_source(module)) if k}
    else:
        kinds = set(problem_dists(module, spec).values())
    own = {"uniform": "uniform [0, 1) (torch.rand)", "normal": "standard normal (torch.randn)"}
    text = ", ".join(own[k] for k in sorted(kinds)) or "as drawn"
    where = "spec" if spec is not None and any(i.dist for i in spec.inputs.values()) else "get_inputs()"
    return {"problem": f"the problem's own: {text}, from {where}", "signed": "signed: standard normal"}


def _source(module: ModuleType) -> str:
    try:
        return Path(module.__file__).read_text()
    except (OSError, TypeError):
        return ""


def build_case(module: ModuleType, spec: Spec | None, variant: Variant | None, *, seed: int, device: str,
               dtype: str | None = None, dist: Dist = "problem") -> Case:
    """Fresh inputs for one trial: from the spec's shapes, else from the module's get_inputs().

    `dist="signed"` replaces every floating input by a standard normal draw of the same shape.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    target_dtype = torch_dtype(dtype or (variant.dtype if variant else None))
    if spec is not None and variant is not None:
        dists = problem_dists(module, spec)
        inputs = []
        for name, shape in input_shapes(spec, variant).items():
            ispec = spec.inputs[name]
            idtype = torch_dtype(ispec.dtype) or target_dtype or torch.float32
            if idtype.is_floating_point:
                normal = dist == "signed" or dists.get(name) == "normal"
                base = torch.randn(shape, generator=gen) if normal else torch.rand(shape, generator=gen)
                inputs.append(base.to(idtype))
            else:
                inputs.append(torch.randint(0, 16, shape, generator=gen).to(idtype))
        args = init_args(spec, variant)
    else:
        inputs, args = inputs_from_module(module, seed)
        if dist == "signed":
            inputs = [torch.randn(x.shape, generator=gen).to(x.dtype)
                      if torch.is_tensor(x) and x.is_floating_point() else x for x in inputs]
        if target_dtype is not None:
            inputs = [x.to(target_dtype) if torch.is_tensor(x) and x.is_floating_point() else x for x in inputs]
    inputs = [x.to(device) if torch.is_tensor(x) else x for x in inputs]
    return Case(init_args=list(args), inputs=inputs)


def inputs_from_module(module: ModuleType, seed: int) -> tuple[list[Any], list[Any]]:
    """get_inputs() and get_init_inputs() under a seeded global generator (they draw from it)."""
    import torch

    torch.manual_seed(seed)
    return list(module.get_inputs()), list(module.get_init_inputs())


def own_dists(module: ModuleType, spec: Spec | None) -> list[str | None]:
    """Per input position: 'uniform', 'normal', or None (not known: uniform, as KernelBench draws)."""
    if spec is not None:
        dists = problem_dists(module, spec)
        return [dists.get(name) if (spec.inputs[name].dtype or "float").startswith(("float", "bfloat"))
                else None for name in spec.inputs]
    return list(get_inputs_generators(_source(module)))


def redraw(template: list[Any], seed: int, dists: list[str | None]) -> list[Any]:
    """Fresh values for a timed call, drawn on the template's device (fast, and the same in every process
    on that kind of device): floating inputs from their own distribution, the others (indices) kept."""
    import torch

    out = []
    for i, x in enumerate(template):
        dist = dists[i] if i < len(dists) else None
        if not torch.is_tensor(x) or not x.is_floating_point():
            out.append(x)
            continue
        gen = torch.Generator(device=x.device).manual_seed(seed + i)
        draw = torch.rand if dist == "uniform" else torch.randn
        out.append(draw(x.shape, generator=gen, device=x.device, dtype=torch.float32).to(x.dtype))
    return out
