"""Kernel files, their references and specs, read and parsed (ast) but never executed.

The parent process never imports candidate code: importing and building inputs live in
problem/cases.py, which only the evaluation worker uses.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import BaseModel

from xe_forge.errors import InputError
from xe_forge.problem.source import MODEL_CLASSES, SourceFile  # noqa: F401 - part of this module's API
from xe_forge.problem.spec import Precision, Spec, SpecError, Variant, load_spec

REQUIRED_FUNCTIONS = ("get_inputs", "get_init_inputs")
SPEC_NAMES = ("{stem}.yaml", "{stem}_spec.yaml", "spec.yaml")  # looked for beside the kernel, in this order


def spec_names_text() -> str:
    """The spec file names as users read them (--help, README, messages): '<stem>.yaml, ...'."""
    return ", ".join(n.replace("{stem}", "<stem>") for n in SPEC_NAMES)


class Problem(BaseModel):
    """What a run optimizes: the input kernel, the reference it must match, and the shapes."""

    kernel: SourceFile
    reference: SourceFile
    reference_is_self: bool
    spec: Spec | None = None
    variant: str | None = None
    precision: Precision | None = None  # the run's precision policy where there is no spec (`--precision`)

    def precision_policy(self) -> Precision:
        """The spec's precision, else the run's, else keep."""
        return self.spec.precision if self.spec is not None else (self.precision or "keep")

    def variant_entry(self, name: str | None = None) -> Variant | None:
        if self.spec is None:
            return None
        return self.spec.variant(name or self.variant)


def did_you_mean(path: Path) -> str | None:
    """'did you mean my_layernorm_pytorch.py?': the closest name among the files beside a missing one."""
    import difflib

    folder = path.parent if str(path.parent) else Path(".")
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError:
        return None
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    return f"did you mean {folder / close[0] if str(path.parent) not in ('', '.') else close[0]}?" if close else None


def not_found(path: Path, role: str) -> InputError:
    return InputError(f"{role} file not found: {path}", hint=did_you_mean(path))


def read_source(path: Path | str, role: str = "kernel", *, require_inputs: bool = True) -> SourceFile:
    """Read and statically check a KernelBench-style file; any problem is one InputError."""
    path = Path(path)
    if not path.exists():
        raise not_found(path, role)
    if not path.is_file():
        raise InputError(f"{role} path is not a file: {path}")
    try:
        source = path.read_text(encoding="utf-8")
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
    """The first spec beside the kernel named as in SPEC_NAMES."""
    for pattern in SPEC_NAMES:
        candidate = kernel.with_name(pattern.format(stem=kernel.stem))
        if candidate.is_file():
            return candidate
    return None


def load_problem(kernel: Path | str, reference: Path | str | None = None, spec: Path | str | None = None,
                 variant: str | None = None, *, discover_spec: bool = True, precision: str | None = None) -> Problem:
    kernel_path = Path(kernel)
    kernel_src = read_source(kernel_path, "kernel")
    ref_path, is_self = resolve_reference(kernel_path, Path(reference) if reference else None)
    ref_src = kernel_src if is_self else read_source(ref_path, "reference")
    spec_path = Path(spec) if spec else (find_spec(kernel_path) if discover_spec else None)
    if spec_path is not None and not spec_path.exists():
        raise not_found(spec_path, "spec")
    parsed = load_spec(spec_path) if spec_path else None
    if parsed is not None:
        parsed.variant(variant)  # raises a clear error for an unknown variant name
    elif variant is not None:
        raise SpecError(f"--variant {variant} needs a spec file (--spec), and none was found beside {kernel_path}")
    from xe_forge.problem.signature import check_signatures

    check_signatures(kernel_src, ref_src, reference_is_self=is_self, spec=parsed, variant=variant)
    return Problem(kernel=kernel_src, reference=ref_src, reference_is_self=is_self, spec=parsed,
                   variant=parsed.variant_name(variant) if parsed else None, precision=precision)


# ---------------------------------------------------------------- worker side: import and inputs
