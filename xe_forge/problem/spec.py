"""Problem specs: which shapes, dtypes and tolerances a kernel is checked and timed at (docs/SPEC.md).

The format is Xe-Forge's (top-level `inputs`, `inits`, and named variant lists such as `ci` and
`bench-gpu`, each entry with `params`, `dtype`, `dims`, `flop`, `rtol`, `atol`), plus two additions:
`unseen:` entries (only checked at the end, never shown to a proposer; dims they omit are taken from
the variant being run) and `precision:` (the accuracy contract).

```yaml
inputs:
  X: {shape: [BATCH, IN_FEAT]}
inits:
  - in_features: IN_FEAT
  - bias_shape: [OUT_FEAT, 1, 1]
ci:
  - {dtype: float32, dims: {BATCH: 8, IN_FEAT: 64, OUT_FEAT: 32}, flop: "2*BATCH*IN_FEAT*OUT_FEAT"}
unseen:
  - dims: {BATCH: 37}
precision: keep
```
"""

from __future__ import annotations

import ast
import math
import operator
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from xe_forge.errors import InputError
from xe_forge.paths import data_dir

Precision = Literal["keep", "allow-tf32", "bf16", "fp16"]
DTYPE_NAMES = {
    "float32": "float32", "fp32": "float32", "float": "float32",
    "float16": "float16", "fp16": "float16", "half": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float64": "float64", "fp64": "float64", "double": "float64",
    "int64": "int64", "int32": "int32", "int8": "int8", "bool": "bool",
}
RESERVED_KEYS = {"inputs", "inits", "unseen", "precision", "allow_torch", "multiple_of", "name", "description"}

Dim = int | float


def spec_doc() -> str:
    """Where the spec format is written down (docs/SPEC.md in a checkout, bundled in a wheel)."""
    try:
        return str(data_dir("docs") / "SPEC.md")
    except FileNotFoundError:
        return "docs/SPEC.md"


class SpecError(InputError):
    """A problem with a spec: the message, then where the format is written down (every spec error says it)."""

    def __str__(self) -> str:
        return (f"{super().__str__()}\n  spec format: {spec_doc()}; `xe-forge spec init KERNEL` writes a "
                "working spec from the kernel's get_inputs()")


def canonical_dtype(name: str) -> str:
    """Map the spellings people use (bf16, half, float) to torch attribute names."""
    key = str(name).strip().lower().removeprefix("torch.")
    if key not in DTYPE_NAMES:
        raise ValueError(f"unknown dtype '{name}' (known: {', '.join(sorted(set(DTYPE_NAMES.values())))})")
    return DTYPE_NAMES[key]


class InputSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    shape: list[str | int]
    dtype: str | None = None
    # None: the distribution get_inputs() draws from (KernelBench: torch.rand); a signed draw is always added
    dist: Literal["normal", "uniform"] | None = None

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, v: str | None) -> str | None:
        return None if v is None else canonical_dtype(v)


class Variant(BaseModel):
    """One concrete configuration: dims bound to numbers, a dtype, tolerances and a FLOP formula."""

    model_config = ConfigDict(extra="forbid")

    params: list[str] | None = None
    dtype: str | None = None
    dims: dict[str, Dim] = Field(default_factory=dict)
    flop: str | None = None
    rtol: float | None = None
    atol: float | None = None

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, v: str | None) -> str | None:
        return None if v is None else canonical_dtype(v)

    def merged_over(self, base: Variant) -> Variant:
        """This (partial) variant completed by `base`: how an `unseen:` entry becomes concrete."""
        data = base.model_dump()
        data["dims"] = {**base.dims, **self.dims}
        for key in ("params", "dtype", "flop", "rtol", "atol"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return Variant(**data)

    def flops(self) -> float | None:
        """Evaluate the FLOP formula with the variant's dims (arithmetic only, no names but dims)."""
        if not self.flop:
            return None
        return float(safe_eval(self.flop, self.dims))


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    inits: list[tuple[str, Any]] = Field(default_factory=list)
    variants: dict[str, list[Variant]] = Field(default_factory=dict)
    unseen: list[Variant] = Field(default_factory=list)
    precision: Precision = "keep"
    # torch ops the problem lets a Triton port keep (e.g. `self.conv`: cuDNN for the convolution);
    # the verifier allows them to the input kernel and every candidate, nothing more
    allow_torch: list[str] = Field(default_factory=list)
    # dims the kernel only supports in multiples (`{M: 32}`: a port that asserts aligned sizes); the
    # verifier's generated unseen shapes keep them so, and its report says so
    multiple_of: dict[str, int] = Field(default_factory=dict)
    path: Path | None = None

    def admits(self, dims: dict[str, Dim]) -> bool:
        """Whether `dims` keeps every `multiple_of` dim a multiple of its step."""
        return all(not isinstance(dims.get(d), int) or dims[d] % m == 0 for d, m in self.multiple_of.items())

    def variant(self, name: str | None) -> Variant:
        """The first entry of a named variant; default `ci`, else the first one declared."""
        if not self.variants:
            raise SpecError(f"spec {self.path} declares no variants (add e.g. a `ci:` list)")
        if name is None:
            name = "ci" if "ci" in self.variants else next(iter(self.variants))
        if name not in self.variants:
            raise SpecError(
                f"spec {self.path} has no variant '{name}'",
                hint=f"variants declared: {', '.join(self.variants)}",
            )
        return self.variants[name][0]

    def variant_name(self, name: str | None) -> str:
        if name is not None:
            return name
        return "ci" if "ci" in self.variants else next(iter(self.variants))


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_EXPONENT = 64  # '9**9**9**9' would hang the parent computing a huge integer


def safe_eval(expr: str, names: dict[str, Any]) -> Any:
    """Evaluate an arithmetic expression over dim names; anything else is an error, not code.

    Walks the tree itself rather than calling eval(), so no name, call or attribute can run, and
    powers are bounded so a typo cannot hang the process.
    """
    tree = ast.parse(str(expr), mode="eval")
    try:
        return _eval_node(tree.body, str(expr), names)
    except (ZeroDivisionError, OverflowError) as err:
        raise ValueError(f"'{expr}' cannot be evaluated: {err}") from None


def _eval_node(node: ast.AST, expr: str, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"'{expr}' names unknown dim '{node.id}'")
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval_node(node.operand, expr, names))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval_node(node.left, expr, names), _eval_node(node.right, expr, names)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError(f"'{expr}' has an exponent above {MAX_EXPONENT}")
        return _BINARY[type(node.op)](left, right)
    raise ValueError(f"'{expr}' is not plain arithmetic over dims ({type(node).__name__})")


def _resolve_value(value: Any, dims: dict[str, Dim], where: str) -> Any:
    """An init/shape value: a dim name, a literal, or a list mixing both (lists become tuples)."""
    if isinstance(value, list):
        return tuple(_resolve_value(v, dims, where) for v in value)
    if isinstance(value, str):
        if value in dims:
            return dims[value]
        try:
            return safe_eval(value, dims)
        except (ValueError, SyntaxError):
            raise SpecError(f"{where}: '{value}' is neither a dim of this variant nor arithmetic over dims") from None
    return value


def init_args(spec: Spec, variant: Variant) -> list[Any]:
    """Constructor arguments for a variant, in declaration order."""
    return [_resolve_value(value, variant.dims, f"inits.{name}") for name, value in spec.inits]


def input_shapes(spec: Spec, variant: Variant) -> dict[str, tuple[int, ...]]:
    """Shapes of the variant's inputs, in call order (`params` if given, else declaration order)."""
    names = variant.params or list(spec.inputs)
    shapes = {}
    for name in names:
        shape = _resolve_value(list(spec.inputs[name].shape), variant.dims, f"inputs.{name}.shape")
        shapes[name] = tuple(int(s) for s in shape)
    return shapes


def load_spec(path: Path) -> Spec:
    """Parse and check a spec file; every problem becomes one SpecError (exit code 2)."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"spec file not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise SpecError(f"spec {path} is not valid YAML: {err}") from None
    if not isinstance(raw, dict):
        raise SpecError(f"spec {path} must be a mapping with `inputs`, `inits` and variant lists")
    try:
        spec = _build(raw, path)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise SpecError(f"spec {path}: {loc}: {first['msg']}") from None
    except ValueError as err:
        raise SpecError(f"spec {path}: {err}") from None
    _check_names(spec)
    return spec


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a mapping, got {value!r}")
    return value


def _parse(cls: type[BaseModel], value: Any, where: str) -> Any:
    """Build one entry, naming the entry (not only the field) when it is wrong."""
    try:
        return cls(**_mapping(value, where))
    except ValidationError as err:
        first = err.errors()[0]
        raise ValueError(f"{where}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None


def _entries(value: Any, where: str) -> list[Variant]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} must be a non-empty list of entries with `dims`")
    return [_parse(Variant, entry, f"{where} entry") for entry in value]


def _build(raw: dict[str, Any], path: Path) -> Spec:
    inits: list[tuple[str, Any]] = []
    raw_inits = raw.get("inits") or []
    if not isinstance(raw_inits, list):
        raise ValueError("`inits` must be a list of one-key mappings like `- in_features: IN_FEAT`")
    for item in raw_inits:
        if not isinstance(item, dict) or len(item) != 1:
            raise ValueError(f"each `inits` entry must be a one-key mapping like `- dim: N`, got {item!r}")
        ((name, value),) = item.items()
        inits.append((str(name), value))
    variants = {str(key): _entries(value, f"variant '{key}'")
                for key, value in raw.items() if key not in RESERVED_KEYS}
    inputs = _mapping(raw.get("inputs") or {}, "`inputs`")
    return Spec(
        inputs={k: _parse(InputSpec, v or {}, f"input '{k}'") for k, v in inputs.items()},
        inits=inits,
        variants=variants,
        unseen=_entries(raw["unseen"], "`unseen`") if raw.get("unseen") else [],
        precision=raw.get("precision", "keep"),
        allow_torch=[str(op) for op in raw.get("allow_torch") or []],
        multiple_of=_multiples(raw.get("multiple_of")),
        path=path,
    )


def _multiples(value: Any) -> dict[str, int]:
    steps = _mapping(value or {}, "`multiple_of`")
    for dim, step in steps.items():
        if isinstance(step, bool) or not isinstance(step, int) or step < 2:
            raise ValueError(f"`multiple_of.{dim}` must be an integer of at least 2, got {step!r}")
    return {str(d): int(s) for d, s in steps.items()}


def _check_names(spec: Spec) -> None:
    """Every name a variant uses must exist: params among inputs, shape/init names among dims."""
    if not spec.inputs:
        raise SpecError(f"spec {spec.path} declares no `inputs`")
    if not spec.variants:
        raise SpecError(f"spec {spec.path} declares no variants (add e.g. a `ci:` list with `dims`)")
    for vname, entries in list(spec.variants.items()) + [("unseen", spec.unseen)]:
        for entry in entries:
            for param in entry.params or []:
                if param not in spec.inputs:
                    raise SpecError(
                        f"spec {spec.path}: variant '{vname}' names unknown input '{param}'",
                        hint=f"inputs declared: {', '.join(spec.inputs)}",
                    )
            if vname == "unseen":
                continue
            concrete_dims = entry.dims
            _check_dims(spec, vname, concrete_dims)
            if entry.flop:
                try:
                    value = safe_eval(entry.flop, concrete_dims)
                except (ValueError, SyntaxError) as err:
                    raise SpecError(f"spec {spec.path}: variant '{vname}' flop: {err}") from None
                if not isinstance(value, int | float) or not math.isfinite(value):
                    raise SpecError(f"spec {spec.path}: variant '{vname}' flop is not a number")
    known = {dim for entries in spec.variants.values() for entry in entries for dim in entry.dims}
    stray = sorted(set(spec.multiple_of) - known)
    if stray:
        raise SpecError(f"spec {spec.path}: `multiple_of` names dim '{stray[0]}', which no variant defines",
                        hint=f"dims defined: {', '.join(sorted(known)) or 'none'}")
    for entry in spec.unseen:
        stray = sorted(set(entry.dims) - known)
        if stray:  # a typo here would silently make the unseen shape equal the seen one
            raise SpecError(f"spec {spec.path}: an `unseen` entry sets dim '{stray[0]}', which no variant defines",
                             hint=f"dims defined: {', '.join(sorted(known)) or 'none'}")
        for base_name, base_entries in spec.variants.items():
            merged = entry.merged_over(base_entries[0])
            _check_dims(spec, f"unseen over {base_name}", merged.dims)
            if entry.flop:
                try:
                    safe_eval(entry.flop, merged.dims)
                except (ValueError, SyntaxError) as err:
                    raise SpecError(f"spec {spec.path}: `unseen` flop: {err}") from None


def _check_dims(spec: Spec, vname: str, dims: dict[str, Dim]) -> None:
    """Shape items and init values are dim names, numbers, or arithmetic over dims ("2*H", "H//2")."""
    for iname, ispec in spec.inputs.items():
        _check_values(spec, vname, list(ispec.shape), f"input '{iname}'", dims)
    for name, value in spec.inits:
        _check_values(spec, vname, value if isinstance(value, list) else [value], f"init '{name}'", dims)


def _check_values(spec: Spec, vname: str, values: list[Any], user: str, dims: dict[str, Dim]) -> None:
    for v in values:
        if isinstance(v, str) and v not in dims:
            try:
                safe_eval(v, dims)
            except (ValueError, SyntaxError):
                _unknown_dim(spec, vname, v, user, dims)


def _unknown_dim(spec: Spec, vname: str, dim: str, user: str, dims: dict[str, Dim]) -> None:
    raise SpecError(
        f"spec {spec.path}: {user} uses dim '{dim}', which variant '{vname}' does not define",
        hint=f"dims defined: {', '.join(dims) or 'none'}",
    )
