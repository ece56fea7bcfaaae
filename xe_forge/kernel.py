"""Kernel files, their references and specs: reading them, and turning a variant into real inputs.

The parent process only reads and parses (ast) source: it never imports candidate code. Importing
(`import_from_path`) and building inputs (`build_case`) happen in the evaluation worker.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from xe_forge.errors import InputError
from xe_forge.spec import Spec, Variant, init_args, input_shapes, load_spec

MODEL_CLASSES = ("ModelNew", "Model")
REQUIRED_FUNCTIONS = ("get_inputs", "get_init_inputs")
SPEC_NAMES = ("{stem}.yaml", "{stem}_spec.yaml", "spec.yaml")


class SourceFile(BaseModel):
    """A kernel or reference file, read and parsed but not executed."""

    path: Path
    source: str
    model_class: str

    @property
    def tree(self) -> ast.Module:
        return ast.parse(self.source, filename=str(self.path))


class Problem(BaseModel):
    """What a run optimizes: the input kernel, the reference it must match, and the shapes."""

    kernel: SourceFile
    reference: SourceFile
    reference_is_self: bool
    spec: Spec | None = None
    variant: str | None = None

    def variant_entry(self, name: str | None = None) -> Variant | None:
        if self.spec is None:
            return None
        return self.spec.variant(name or self.variant)

    def unseen_entries(self) -> list[Variant]:
        """Concrete unseen variants: the spec's, merged over the run's variant (empty without a spec)."""
        base = self.variant_entry()
        if self.spec is None or base is None:
            return []
        return [entry.merged_over(base) for entry in self.spec.unseen]


def read_source(path: Path | str, role: str = "kernel", *, require_inputs: bool = True) -> SourceFile:
    """Read and statically check a KernelBench-style file; any problem is one InputError."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{role} file not found: {path}")
    if not path.is_file():
        raise InputError(f"{role} path is not a file: {path}")
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {role} file {path}: {err}") from None
    return parse_source(source, path, role, require_inputs=require_inputs)


def parse_source(source: str, path: Path, role: str = "kernel", *, require_inputs: bool = True) -> SourceFile:
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as err:
        raise InputError(f"{role} file {path} has a syntax error at line {err.lineno}: {err.msg}") from None
    names = _top_level_names(tree)
    model = next((c for c in MODEL_CLASSES if c in names["class"]), None)
    if model is None:
        raise InputError(f"{role} file {path} defines no `class Model(nn.Module)` (or `ModelNew`)")
    if require_inputs:
        for fn in REQUIRED_FUNCTIONS:
            if fn not in names["def"]:
                raise InputError(f"{role} file {path} defines no `{fn}()` function",
                                 hint="KernelBench format: get_inputs() returns the forward args, "
                                      "get_init_inputs() the constructor args")
    return SourceFile(path=path.resolve(), source=source, model_class=model)


def _top_level_names(tree: ast.Module) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"class": set(), "def": set()}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out["class"].add(node.name)
        elif isinstance(node, ast.FunctionDef):
            out["def"].add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out["def"].add(target.id)
    return out


def resolve_reference(kernel: Path, reference: Path | None) -> tuple[Path, bool]:
    """`--reference`, else `<stem>_pytorch.py` beside the kernel, else the kernel itself (flagged)."""
    if reference is not None:
        return Path(reference), False
    sibling = kernel.with_name(f"{kernel.stem}_pytorch.py")
    if sibling.is_file():
        return sibling, False
    return kernel, True


def find_spec(kernel: Path) -> Path | None:
    """A spec beside the kernel: `<stem>.yaml`, `<stem>_spec.yaml`, or `spec.yaml`."""
    for pattern in SPEC_NAMES:
        candidate = kernel.with_name(pattern.format(stem=kernel.stem))
        if candidate.is_file():
            return candidate
    return None


def load_problem(kernel: Path | str, reference: Path | str | None = None, spec: Path | str | None = None,
                 variant: str | None = None, *, discover_spec: bool = True) -> Problem:
    kernel_path = Path(kernel)
    kernel_src = read_source(kernel_path, "kernel")
    ref_path, is_self = resolve_reference(kernel_path, Path(reference) if reference else None)
    ref_src = kernel_src if is_self else read_source(ref_path, "reference")
    spec_path = Path(spec) if spec else (find_spec(kernel_path) if discover_spec else None)
    parsed = load_spec(spec_path) if spec_path else None
    if parsed is not None:
        parsed.variant(variant)  # raises a clear error for an unknown variant name
    elif variant is not None:
        raise InputError(f"--variant {variant} needs a spec file (--spec), and none was found beside {kernel_path}")
    return Problem(kernel=kernel_src, reference=ref_src, reference_is_self=is_self, spec=parsed,
                   variant=parsed.variant_name(variant) if parsed else None)


# ---------------------------------------------------------------- worker side: import and inputs

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
