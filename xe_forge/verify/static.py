"""Static checks on candidate source (AST only: the parent never imports candidate code).

They reject the cheap reward hacks before anything runs: no Triton kernel, a kernel defined but
never launched, torch doing the work, try/except fallbacks, threads/streams/subprocesses/sockets/
file writes, monkey-patching of torch or triton, a model that subclasses the reference.
Forward is followed into the module's own helper functions and methods it calls, so moving
`torch.matmul` into a helper does not hide it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from xe_forge.verify.models import Finding

ALLOWED_TORCH = {
    # allocation and metadata: no arithmetic on data
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "arange", "tensor", "as_tensor", "as_strided", "is_tensor", "is_floating_point", "numel", "Size", "device",
    "get_default_dtype", "promote_types", "result_type", "finfo", "iinfo", "no_grad", "inference_mode",
    "broadcast_shapes", "is_grad_enabled", "set_grad_enabled",
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
FORBIDDEN_MODULES = {"threading", "multiprocessing", "subprocess", "socket", "concurrent", "asyncio",
                     "ctypes", "signal", "shutil", "requests", "urllib", "http"}
FORBIDDEN_CALLS = {
    ("os", "system"): "runs a shell command", ("os", "fork"): "forks a process", ("os", "popen"): "runs a shell",
    ("os", "remove"): "deletes files", ("os", "kill"): "signals processes", ("os", "_exit"): "exits the worker",
    ("sys", "exit"): "exits the worker", ("torch", "cuda", "Stream"): "uses a side stream",
    ("torch", "xpu", "Stream"): "uses a side stream", ("torch", "cuda", "stream"): "uses a side stream",
    ("torch", "xpu", "stream"): "uses a side stream", ("torch", "cuda", "set_stream"): "uses a side stream",
    ("torch", "cuda", "graph"): "captures a graph outside the timer", ("torch", "compile"): "lets torch compile the work",
}
# The verifier's own package and dynamic import machinery: a way to patch the harness from inside.
HARNESS_MODULES = {"xe_forge", "importlib"}
PATCHED_ROOTS = {"torch", "triton", "tl", "F", "nn", "np", "numpy"}


@dataclass
class StaticResult:
    findings: list[Finding] = field(default_factory=list)
    torch_ops: set[str] = field(default_factory=set)  # torch work found in forward, allowed or not
    kernels: set[str] = field(default_factory=set)
    launches: set[str] = field(default_factory=set)

    @property
    def passed(self) -> bool:
        return not self.findings


def torch_ops_of(source: str) -> set[str]:
    """The torch compute a file's forward delegates: the allowance a candidate derived from it inherits."""
    return check_source(source, allow=None, record_only=True).torch_ops


def check_source(source: str, *, allow: Iterable[str] | None = None, record_only: bool = False) -> StaticResult:
    """Run every static check; `allow` lists torch ops the input kernel already delegates."""
    result = StaticResult()
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        result.findings.append(Finding(check="syntax", message=f"syntax error: {err.msg}", line=err.lineno))
        return result
    aliases = _import_aliases(tree)
    result.kernels = _jit_kernels(tree, aliases)
    allowed = _normalise_allowance(allow or ())
    model = _model_class(tree)
    if model is None:
        result.findings.append(Finding(check="structure", message="no `class Model(nn.Module)`/`ModelNew` defined"))
        return result
    reachable = _reachable_functions(tree, model, result.kernels)
    submodules = _submodules(model)
    for fn in reachable:
        _scan_function(fn, result, aliases, submodules, allowed)
    if record_only:
        return result
    if not result.kernels:
        result.findings.append(Finding(check="no-kernel", message="the file defines no @triton.jit kernel",
                                       hint="the work must happen in a Triton kernel launched from forward"))
    elif not result.launches:
        result.findings.append(Finding(check="no-launch", message="forward (and the helpers it calls) launches no "
                                       "@triton.jit kernel: a kernel that is defined but never launched does nothing",
                                       hint="launch the kernel from forward: kernel[grid](...)"))
    _check_model_bases(model, result)
    _check_whole_file(tree, aliases, result)
    return result


def _normalise_allowance(allow: Iterable[str]) -> set[str]:
    out = set()
    for item in allow:
        item = item.strip()
        if item:
            out.add(item)
            out.add(item.split(".")[-1].split(":")[-1])
    return out


def _is_allowed(op: str, allowed: set[str]) -> bool:
    return op in allowed or op.split(".")[-1].split(":")[-1] in allowed


def _import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted module path, e.g. {'tl': 'triton.language', 'F': 'torch.nn.functional'}."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def _jit_kernels(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                dotted = _dotted(target, aliases) or ""
                if dotted in ("triton.jit", "triton.autotune", "triton.heuristics") or dotted.endswith("triton.jit"):
                    names.add(node.name)
    return names


def _model_class(tree: ast.Module) -> ast.ClassDef | None:
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    return classes.get("ModelNew") or classes.get("Model")


def _submodules(model: ast.ClassDef) -> set[str]:
    """Attributes assigned an nn.* module (or any call with a capitalised name) in __init__."""
    names = set()
    for node in ast.walk(model):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if callee[:1].isupper() and callee not in ("Parameter", "Tensor"):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        names.add(t.attr)
    return names


def _reachable_functions(tree: ast.Module, model: ast.ClassDef, kernels: set[str]) -> list[ast.FunctionDef]:
    """forward, plus module functions and model methods it calls, transitively (not jit kernels).

    Decorated helpers count too: `@torch.no_grad()` or `@functools.cache` on a helper must not hide it.
    """
    methods = {n.name: n for n in model.body if isinstance(n, ast.FunctionDef)}
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in kernels}
    if "forward" not in methods:
        return []
    seen: dict[int, ast.FunctionDef] = {}
    stack = [methods["forward"]]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen[id(fn)] = fn
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Name) and f.id in funcs:
                    stack.append(funcs[f.id])
                elif (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                      and f.attr in methods):
                    stack.append(methods[f.attr])
    return list(seen.values())


def _scan_function(fn: ast.FunctionDef, result: StaticResult, aliases: dict[str, str], submodules: set[str],
                   allowed: set[str]) -> None:
    def flag(op: str, node: ast.AST, what: str) -> None:
        result.torch_ops.add(op)
        if not _is_allowed(op, allowed):
            result.findings.append(Finding(check="torch-compute", line=getattr(node, "lineno", None),
                                           message=f"{what} `{op}` does work in torch instead of a Triton kernel",
                                           hint="compute it inside a @triton.jit kernel"))

    called = {id(a) for n in ast.walk(fn) if isinstance(n, ast.Call) for a in ast.walk(n.func)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and id(node) not in called:
            op = _referenced_compute(_dotted(node, aliases) or "")
            if op:  # `mm = torch.mm`, `functools.reduce(operator.matmul, ...)`: called under another name
                flag(op, node, "reference to")
        if isinstance(node, ast.Try):
            result.findings.append(Finding(check="try-except", line=node.lineno,
                                           message="try/except in forward: a fallback path can hide a failing kernel"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            flag("operator:@", node, "the @ operator")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in result.kernels:
            result.launches.add(node.value.id)
        elif isinstance(node, ast.Call):
            _scan_call(node, result, aliases, submodules, flag)


def _scan_call(node: ast.Call, result: StaticResult, aliases: dict[str, str], submodules: set[str], flag) -> None:
    func = node.func
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in result.kernels:
        result.launches.add(func.value.id)
        return
    dotted = _dotted(func, aliases)
    parts = dotted.split(".") if dotted else []
    if dotted in ("getattr", "builtins.getattr") and len(node.args) > 1:
        target = _dotted(node.args[0], aliases) or ""
        name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
        # getattr(torch, "float16") names a dtype; getattr(torch, "mm") or a computed name may be anything
        if target.split(".")[0] in ("torch", "numpy", "operator") and (
                not isinstance(name, str) or _referenced_compute(f"{target}.{name}")):
            flag(f"getattr({ast.unparse(node.args[0])}, {ast.unparse(node.args[1])})", node, "dynamic lookup")
    elif dotted and dotted.startswith("torch.nn.functional."):
        flag(f"F.{dotted.rsplit('.', 1)[1]}", node, "torch.nn.functional call")
    elif dotted and dotted.startswith("torch.") and dotted.count(".") == 1:
        name = dotted.split(".")[1]
        if name not in ALLOWED_TORCH and not name[:1].isupper():
            flag(f"torch.{name}", node, "torch call")
    elif len(parts) > 2 and parts[0] == "torch" and parts[1] in TORCH_COMPUTE_NAMESPACES:
        flag(dotted, node, "torch call")
    elif len(parts) > 1 and parts[0] == "numpy" and parts[-1] not in ALLOWED_NUMPY:
        flag(dotted, node, "host numpy call")
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        if func.attr in submodules:
            flag(f"self.{func.attr}", node, "calling submodule")
    elif isinstance(func, ast.Attribute):
        if func.attr in COMPUTE_METHODS and not (dotted and dotted.split(".")[0] in ("triton", "math")):
            flag(f"method:{func.attr}", node, "tensor method")


def _referenced_compute(dotted: str) -> str | None:
    """A compute function named as a value rather than called where it is named, else None."""
    parts = dotted.split(".")
    if dotted in ("operator.matmul", "operator.imatmul") or dotted.startswith("torch.nn.functional."):
        return dotted
    if parts[0] in ("torch", "numpy") and len(parts) > 1 and parts[-1] in COMPUTE_METHODS:
        return dotted
    if len(parts) > 2 and parts[0] == "torch" and parts[1] in TORCH_COMPUTE_NAMESPACES:
        return dotted
    return None


def _check_model_bases(model: ast.ClassDef, result: StaticResult) -> None:
    for base in model.bases:
        text = ast.unparse(base)
        if text not in ("nn.Module", "torch.nn.Module", "Module"):
            result.findings.append(Finding(check="subclass", line=model.lineno,
                                           message=f"{model.name} subclasses `{text}`, not nn.Module: inheriting "
                                                   "from the reference would run its code"))


def _check_whole_file(tree: ast.Module, aliases: dict[str, str], result: StaticResult) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for mod in mods:
                if mod.split(".")[0] in FORBIDDEN_MODULES:
                    result.findings.append(Finding(check="sandbox", line=node.lineno,
                                                   message=f"imports `{mod}` (threads, processes, sockets and "
                                                           "signals are not allowed in a kernel file)"))
                if mod.split(".")[0] in HARNESS_MODULES:
                    result.findings.append(Finding(check="sandbox", line=node.lineno,
                                                   message=f"imports `{mod}`: a kernel file must not reach into "
                                                           "the verifier or load modules dynamically"))
                if mod.split(".")[-1].endswith("_pytorch") or mod.split(".")[-1] == "reference":
                    result.findings.append(Finding(check="reference-import", line=node.lineno,
                                                   message=f"imports the reference module `{mod}`"))
        elif isinstance(node, ast.Attribute) and _dotted(node, aliases) == "sys.modules":
            result.findings.append(Finding(check="sandbox", line=node.lineno,
                                           message="reads `sys.modules`: reaching other loaded modules (the "
                                                   "reference, the verifier) is not allowed"))
        elif isinstance(node, ast.Call):
            dotted = _dotted(node.func, aliases) or ""
            if dotted == "__import__":
                result.findings.append(Finding(check="sandbox", line=node.lineno,
                                               message="calls `__import__`: imports must be plain import statements"))
            if dotted in ("eval", "exec", "compile", "builtins.eval", "builtins.exec"):
                result.findings.append(Finding(check="sandbox", line=node.lineno,
                                               message=f"calls `{dotted}`: code built from strings escapes every check"))
            for key, why in FORBIDDEN_CALLS.items():
                if dotted == ".".join(key) or dotted.endswith("." + ".".join(key)):
                    result.findings.append(Finding(check="sandbox", line=node.lineno, message=f"`{dotted}` {why}"))
            if dotted in ("open", "io.open") and _opens_for_write(node):
                result.findings.append(Finding(check="sandbox", line=node.lineno, message="opens a file for writing"))
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("write_text", "write_bytes", "unlink"):
                result.findings.append(Finding(check="sandbox", line=node.lineno,
                                               message=f"`.{node.func.attr}()` writes to the file system"))
            if dotted in ("setattr", "builtins.setattr") and node.args:
                root = (_dotted(node.args[0], aliases) or "").split(".")[0]
                if root in PATCHED_ROOTS or root in ("torch", "triton"):
                    result.findings.append(Finding(check="monkey-patch", line=node.lineno,
                                                   message=f"setattr on `{ast.unparse(node.args[0])}`"))
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute):
                    root = (_dotted(t, aliases) or "").split(".")[0]
                    if root in ("torch", "triton", "numpy"):
                        result.findings.append(Finding(check="monkey-patch", line=node.lineno,
                                                       message=f"assigns `{ast.unparse(t)}`: patching torch or "
                                                               "triton is not allowed"))


def _opens_for_write(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax+")


def launch_options(source: str) -> list[tuple[int, dict]]:
    """Literal launch keywords at each `kernel[grid](...)` site: checked against the toolchain."""
    out = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            opts = {}
            for kw in node.keywords:
                if kw.arg in ("num_warps", "num_stages", "num_ctas", "grf_mode", "warp_size", "threads_per_warp",
                              "maxnreg") and isinstance(kw.value, ast.Constant):
                    opts[kw.arg] = kw.value.value
            if opts:
                out.append((node.lineno, opts))
    return out
