"""One Inductor kernel module -> a plain @triton.jit function and what its launch needs.

Inductor wraps each kernel in a `triton_heuristics.<kind>(...)` decorator (autotuning, grid rules,
launch metadata) and imports helpers from torch._inductor. The packaged kernel keeps the body,
drops the decorator (its facts move into a `KernelDef`: parameter order, grid kind, template launch
options) and calls Triton's own functions or the portable helpers of helpers.py instead.
"""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel, Field

from xe_forge.proposers.lower.helpers import (
    DROPPED_STATEMENTS,
    HELPERS,
    LIBDEVICE_HELPERS,
    TL_NATIVE,
    helper_name,
)
from xe_forge.proposers.lower.models import PackagingError

MATH_MODULES = {"libdevice", "tl_math"}


class KernelDef(BaseModel):
    """A cleaned kernel: its source and the launch facts its decorator carried."""

    name: str
    source: str
    kind: str
    params: list[str]  # every parameter, in order (constexpr ones included)
    constants: dict[str, Any] = Field(default_factory=dict)
    grid_type: str | None = None
    extra_launcher_args: list[str] = Field(default_factory=list)
    num_warps: int | None = None
    num_stages: int | None = None
    helpers: set[str] = Field(default_factory=set)
    libdevice: set[str] = Field(default_factory=set)  # kept as libdevice.*: not interpretable


def parse_kernel(name: str, module_source: str) -> KernelDef:
    """Read the kernel module Inductor generated for `name` (the text inside async_compile.triton)."""
    tree = ast.parse(module_source)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    kernel = next((f for f in funcs if f.name == name), None)
    if kernel is None:
        raise PackagingError(f"kernel {name}: its module defines no function of that name")
    decorator = _heuristics_decorator(kernel)
    meta = _decorator_facts(name, decorator)
    rewriter = _BodyRewriter(name)
    cleaned = []
    for fn in funcs:  # user-defined Triton kernels can bring jit functions they call
        fn.decorator_list = [ast.parse("triton.jit", mode="eval").body]
        cleaned.append(rewriter.visit(fn))
    source = "\n\n\n".join(ast.unparse(ast.fix_missing_locations(f)) for f in cleaned)
    meta.pop("signature")
    return KernelDef(name=name, source=source, params=[p.arg for p in kernel.args.args], helpers=rewriter.helpers,
                     libdevice=rewriter.libdevice, **meta)


def _heuristics_decorator(fn: ast.FunctionDef) -> ast.Call | None:
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and \
                isinstance(dec.func.value, ast.Name) and dec.func.value.id == "triton_heuristics":
            return dec
    return None


def _decorator_facts(name: str, dec: ast.Call | None) -> dict[str, Any]:
    """Signature, constants, grid type and (templates) launch options from the decorator's literals."""
    facts: dict[str, Any] = {"kind": "jit", "signature": {}, "constants": {}}
    if dec is None:
        return facts
    facts["kind"] = dec.func.attr
    kwargs = {k.arg: k.value for k in dec.keywords if k.arg}
    triton_meta = _dict_entries(kwargs.get("triton_meta"))
    inductor_meta = _dict_entries(kwargs.get("inductor_meta"))
    facts["signature"] = _literal(triton_meta.get("signature"), name, "signature") or {}
    facts["constants"] = _literal(triton_meta.get("constants"), name, "constants") or {}
    facts["grid_type"] = _literal(inductor_meta.get("grid_type"), name, "grid_type")
    facts["extra_launcher_args"] = _literal(inductor_meta.get("extra_launcher_args"), name, "launcher args") or []
    for key in ("num_warps", "num_stages"):
        if key in kwargs:
            facts[key] = _literal(kwargs[key], name, key)
    if facts["kind"] == "user_autotune":
        configs = _literal(kwargs.get("configs"), name, "configs") or []
        if len(configs) == 1:
            facts["num_warps"] = configs[0].get("num_warps")
            facts["num_stages"] = configs[0].get("num_stages")
    return facts


def _dict_entries(node: ast.AST | None) -> dict[str, ast.AST]:
    """A dict literal's entries by string key, values left as syntax (some are not literals)."""
    if not isinstance(node, ast.Dict):
        return {}
    return {k.value: v for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _literal(node: ast.AST | None, name: str, what: str) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise PackagingError(f"kernel {name}: its {what} is not a literal ({ast.unparse(node)[:80]})") from None


class _BodyRewriter(ast.NodeTransformer):
    """triton_helpers.* -> _xf_* helpers; libdevice.* / tl_math.* -> tl.* or helpers."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel
        self.helpers: set[str] = set()
        self.libdevice: set[str] = set()

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                call.func.attr in DROPPED_STATEMENTS:
            return None
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if not isinstance(node.value, ast.Name):
            return self.generic_visit(node)
        module, attr = node.value.id, node.attr
        if module == "triton_helpers":
            if attr not in HELPERS:
                raise PackagingError(f"kernel {self.kernel}: calls triton_helpers.{attr}, which has no portable "
                                     "helper in xe_forge/proposers/lower/helpers.py")
            self.helpers.add(attr)
            return ast.Name(id=helper_name(attr), ctx=ast.Load())
        if module in MATH_MODULES:
            if attr in TL_NATIVE:
                return ast.parse(TL_NATIVE[attr], mode="eval").body
            if attr in LIBDEVICE_HELPERS:
                self.helpers.add(LIBDEVICE_HELPERS[attr])
                return ast.Name(id=helper_name(LIBDEVICE_HELPERS[attr]), ctx=ast.Load())
            if module == "tl_math":
                return ast.parse(f"tl.math.{attr}", mode="eval").body
            self.libdevice.add(attr)  # portable across GPU backends, but the interpreter lacks it
            return node
        return self.generic_visit(node)
