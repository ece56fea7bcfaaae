"""Importing kernel files and building their inputs: the evaluation worker's side of a problem.

Nothing here runs in the parent process (it would execute candidate code there).
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from xe_forge.errors import InputError
from xe_forge.problem.kernel import MODEL_CLASSES
from xe_forge.problem.spec import Spec, Variant, init_args, input_shapes

_counter = itertools.count()


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


def build_case(module: ModuleType, spec: Spec | None, variant: Variant | None, *, seed: int, device: str,
               dtype: str | None = None, batch_size: int | None = None) -> Case:
    """Fresh inputs for one trial: from the spec's shapes, else from the module's get_inputs().

    Without a spec, `batch_size` rescales the module constant of that name (KernelBench's leading dim),
    which is how unseen shapes are made.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    target_dtype = torch_dtype(dtype or (variant.dtype if variant else None))
    if spec is not None and variant is not None:
        inputs = []
        for name, shape in input_shapes(spec, variant).items():
            ispec = spec.inputs[name]
            idtype = torch_dtype(ispec.dtype) or target_dtype or torch.float32
            if idtype.is_floating_point:
                base = torch.randn(shape, generator=gen) if ispec.dist == "normal" else torch.rand(shape, generator=gen)
                inputs.append(base.to(idtype))
            else:
                inputs.append(torch.randint(0, 16, shape, generator=gen).to(idtype))
        args = init_args(spec, variant)
    else:
        inputs, args = _inputs_from_module(module, seed, batch_size)
        if target_dtype is not None:
            inputs = [x.to(target_dtype) if torch.is_tensor(x) and x.is_floating_point() else x for x in inputs]
    inputs = [x.to(device) if torch.is_tensor(x) else x for x in inputs]
    return Case(init_args=list(args), inputs=inputs)


def _inputs_from_module(module: ModuleType, seed: int, batch_size: int | None) -> tuple[list[Any], list[Any]]:
    import torch

    saved = getattr(module, "batch_size", None)
    if batch_size is not None:
        if saved is None:
            raise InputError(f"{module.__file__} has no module-level `batch_size` to derive unseen shapes from",
                             hint="give a spec with `unseen:` variants, or pass --no-unseen")
        module.batch_size = batch_size
    try:
        torch.manual_seed(seed)
        inputs = list(module.get_inputs())
        args = list(module.get_init_inputs())
    finally:
        if batch_size is not None:
            module.batch_size = saved
    return inputs, args


def unseen_batch_sizes(batch_size: int) -> list[int]:
    """Batch sizes never tuned for: an odd size below and one above the original."""
    return sorted({max(1, batch_size // 2 + 1), batch_size + 3} - {batch_size})
