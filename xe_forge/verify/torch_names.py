"""What the static torch-compute rule reads in a dotted name: the tables, the call rule, and references.

A torch function is refused by what it is, not by how it is reached. The call rule (`call_refusal`) says
which dotted names are torch work when called; a *reference* to one of those functions (a load that is
not the call: `_q = torch.is_autocast_enabled` at module level, `self.f = torch.tanh`, a default
argument, `getattr(torch, "is_autocast_enabled")`) gets the same refusal wherever host code holds it
(red team 8 a01b, a19b): the value can be called later under any name, and a function that dispatches
no aten op (a global-mode query) is invisible to the run-time audit.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from xe_forge.verify.escapes import dotted
from xe_forge.verify.subset_rules import resolve

ALLOWED_TORCH = {
    # allocation, metadata and data movement: no arithmetic on data
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "arange", "tensor", "as_tensor", "as_strided", "is_tensor", "is_floating_point", "numel", "Size", "device",
    "get_default_dtype", "promote_types", "result_type", "finfo", "iinfo", "no_grad", "inference_mode",
    "broadcast_shapes", "is_grad_enabled", "set_grad_enabled", "cat", "concat", "concatenate", "stack", "hstack",
    "vstack", "split", "chunk", "unbind", "narrow", "reshape", "flatten", "unflatten", "permute", "transpose",
    "squeeze", "unsqueeze", "movedim", "broadcast_to", "manual_seed",
}
# Tensor methods that move or describe data but compute nothing (views, casts, copies, metadata).
ALLOWED_METHODS = {
    "view", "reshape", "permute", "transpose", "t", "contiguous", "unsqueeze", "squeeze", "expand", "expand_as",
    "flatten", "unflatten", "narrow", "select", "split", "chunk", "unbind", "view_as", "reshape_as", "movedim",
    "to", "float", "half", "bfloat16", "double", "int", "long", "type", "cpu", "cuda", "xpu",
    "size", "stride", "dim", "numel", "element_size", "data_ptr", "is_contiguous", "storage_offset",
    "clone", "copy_", "detach", "new_empty", "new_zeros", "new_ones", "new_full", "fill_", "zero_",
    "item", "tolist", "get", "items", "keys", "values", "append", "extend", "format", "join", "cdiv",
    "next_power_of_2", "parameters", "named_parameters", "state_dict", "register_buffer",
}
# Tensor methods that do the arithmetic a Triton kernel should be doing.
COMPUTE_METHODS = {
    "matmul", "mm", "bmm", "addmm", "addmv", "baddbmm", "mv", "dot", "einsum", "softmax", "log_softmax",
    "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "cumsum", "cumprod", "logsumexp",
    "var", "std", "norm", "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "pow", "abs", "neg",
    "relu", "relu_", "sigmoid", "sigmoid_", "tanh", "tanh_", "clamp", "clamp_", "clip", "add", "add_", "sub",
    "sub_", "mul", "mul_", "div", "div_", "addcmul", "addcdiv", "lerp", "where", "masked_fill", "gelu",
    "silu", "mish", "hardtanh", "leaky_relu", "erf", "sin", "cos", "reciprocal", "square", "maximum",
    "minimum", "conv2d", "linear", "sort", "topk", "floor", "ceil", "round", "sign",
    "__matmul__", "__rmatmul__", "inner", "outer", "tensordot", "kron", "vdot", "ger", "cdist", "conv1d", "conv3d",
    "bilinear",
}
# torch sub-namespaces whose functions compute (torch.linalg.vecdot, torch.ops.aten.mm.default, ...).
TORCH_COMPUTE_NAMESPACES = {"linalg", "special", "fft", "ops", "_C", "sparse", "nested", "func", "masked",
                            "_refs", "_prims"}
# numpy calls that only describe sizes and types; any other numpy call in forward computes on the host.
ALLOWED_NUMPY = {"prod", "dtype", "finfo", "iinfo"}
# torch.nn.functional calls that only move data: padding (`pad`, `constant_pad_nd` at dispatch) is in the
# dispatch audit's MOVEMENT, which judges what each call really dispatched
FUNCTIONAL_MOVEMENT = frozenset({"pad"})


def call_refusal(name: str) -> tuple[str, str] | None:
    """(op, what) for a call of the dotted name `name` that does torch (or host numpy) work, else None."""
    parts = name.split(".")
    if name.startswith("torch.nn.functional.") and parts[-1] not in FUNCTIONAL_MOVEMENT:
        return f"F.{parts[-1]}", "torch.nn.functional call"
    if name.startswith("torch.") and len(parts) == 2:
        op = parts[1]
        return (f"torch.{op}", "torch call") if op not in ALLOWED_TORCH and not op[:1].isupper() else None
    if len(parts) > 2 and parts[0] == "torch" and parts[1] in TORCH_COMPUTE_NAMESPACES:
        return name, "torch call"
    if len(parts) > 1 and parts[0] == "numpy" and parts[-1] not in ALLOWED_NUMPY:
        return name, "host numpy call"
    return None


def _referenced_compute(path: str) -> str | None:
    """A compute function named as a value rather than called where it is named, else None."""
    parts = path.split(".")
    if path in ("operator.matmul", "operator.imatmul") or path.startswith("torch.nn.functional."):
        return path
    if parts[0] in ("torch", "numpy") and len(parts) > 1 and parts[-1] in COMPUTE_METHODS:
        return path
    if len(parts) > 2 and parts[0] == "torch" and parts[1] in TORCH_COMPUTE_NAMESPACES:
        return path
    return None


def _is_function(path: str) -> bool:
    """Whether `path` resolves to something callable that is not a class (`torch.float32` is a dtype,
    `torch.dtype` a class: neither is torch work to hold)."""
    obj = resolve(path)
    return obj is not None and callable(obj) and not isinstance(obj, type)


def referenced_op(path: str) -> str | None:
    """The op a reference to `path` (not a call of it) holds: a compute function, or any function whose
    call the call rule refuses, else None."""
    op = _referenced_compute(path)
    if op is not None:
        return op
    found = call_refusal(path)
    return found[0] if found is not None and _is_function(path) else None


def reference_sites(tree: ast.Module, aliases: dict[str, str],
                    skip: Callable[[ast.AST], bool]) -> list[tuple[ast.AST, str, str]]:
    """Every (node, op, what) where host code holds a torch function as a value rather than calling it there:
    an outermost attribute chain or a name bound by an import, not the callee of a call, and
    `getattr(<module path>, "<literal>")`. `skip(node)` leaves out jit bodies and backward-only code."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    bases = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    out = []
    for node in ast.walk(tree):
        if skip(node):
            continue
        path, what = None, "reference to"
        if isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load) \
                and id(node) not in called and id(node) not in bases:
            if isinstance(node, ast.Name) and node.id not in aliases:
                continue
            path = dotted(node, aliases)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str):
            target = dotted(node.args[0], aliases)
            path = f"{target}.{node.args[1].value}" if target else None
            what = "dynamic lookup"
        op = referenced_op(path) if path else None
        if op is not None and what == "dynamic lookup":
            op = f"getattr({ast.unparse(node.args[0])}, {ast.unparse(node.args[1])})"
        if op is not None:
            out.append((node, op, what))
    return out
