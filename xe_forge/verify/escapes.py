"""Escape routes, anywhere in a kernel file: what would let code reach past the kernel it claims to be.

Read on the whole module (module level, class bodies, decorators, every function), because code
runs at import, in hooks and in helper objects as well as in forward:
- introspection and dynamic code: frames, gc, inspect, builtins, importlib, ctypes, eval/exec,
  dunder attributes (`__globals__`, `__closure__`, `__dict__`, `__class__`...), dynamic getattr;
- torch and triton internals and escape hatches: private names (`torch._C`, `torch.utils._python_dispatch`),
  torch.jit/compile/library/ops/overrides/profiler, jiterator, C++ extensions, streams, graphs,
  events, global settings, `register_*hook`, tensor subclasses and `__torch_function__`. The one
  exception: an aten operator named in full (`torch.ops.aten.randint.low_out`, as TorchInductor
  keeps library calls) that the allowance names exactly; the dispatch audit meters it like any
  torch call, and other namespaces (custom ops, `load_library`) stay refused;
- the process and machine: threads, processes, signals, sockets, files, clocks, the environment;
- monkey-patching: assigning into anything reached from an imported module, directly or through a
  name bound to it.
A `@triton.jit` body may call only other jit functions, `tl`/`triton` APIs and a few builtins (the
interpreter would otherwise run host Python inside a "kernel"); a launch may not pass a host
function as a constexpr.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field

from xe_forge.verify.models import Finding
from xe_forge.verify.subset_rules import resolve

FORBIDDEN_IMPORTS = {
    "threading": "threads", "multiprocessing": "processes", "subprocess": "processes", "concurrent": "threads",
    "asyncio": "threads", "socket": "sockets", "ssl": "sockets", "requests": "the network", "urllib": "the network",
    "http": "the network", "signal": "signals", "ctypes": "native code", "cffi": "native code", "cupy": "native code",
    "numba": "native code", "pycuda": "native code", "cuda": "native code", "shutil": "files", "tempfile": "files",
    "pathlib": "files", "io": "files", "glob": "files", "mmap": "memory maps", "inspect": "introspection",
    "gc": "introspection", "builtins": "introspection", "traceback": "introspection", "types": "introspection",
    "weakref": "introspection", "importlib": "dynamic imports", "imp": "dynamic imports", "pkgutil": "dynamic imports",
    "runpy": "dynamic imports", "code": "dynamic code", "codeop": "dynamic code", "marshal": "dynamic code",
    "pickle": "dynamic code", "dill": "dynamic code", "cloudpickle": "dynamic code", "copyreg": "dynamic code",
    "faulthandler": "the process", "atexit": "the process", "resource": "the process", "timeit": "clocks",
    "datetime": "clocks", "xe_forge": "the verifier",
}
# modules a kernel file may import for a few harmless names only (a crash or a sleep is the kernel's
# own failure; clocks, files and the interpreter's internals are not)
PARTIAL_MODULES = {
    "sys": ({"version_info", "version", "maxsize", "float_info", "byteorder", "platform"}, "the interpreter's internals"),
    "os": ({"cpu_count", "path.join", "path.basename", "path.dirname", "sep", "abort"},
           "the operating system (the environment too: it tells a check from production)"),
    "time": ({"sleep"}, "clocks"),
}
FORBIDDEN_TORCH = {
    "torch.jit": "TorchScript", "torch.compile": "torch.compile", "torch.library": "custom operators",
    "torch.ops": "raw operators", "torch.overrides": "torch-function modes", "torch.profiler": "the profiler",
    "torch.autograd.profiler": "the profiler", "torch.autograd.graph": "autograd hooks", "torch.fx": "graph capture",
    "torch.export": "graph capture", "torch.compiler": "torch.compile", "torch.cuda.jiterator": "runtime-compiled "
    "CUDA", "torch.utils.cpp_extension": "C++ extensions", "torch.utils.dlpack": "foreign memory",
    "torch.utils.hooks": "hooks", "torch.multiprocessing": "processes", "torch.distributed": "processes",
    "torch.hub": "downloads", "torch.package": "dynamic code", "torch.cuda.Stream": "side streams",
    "torch.cuda.stream": "side streams", "torch.cuda.streams": "side streams", "torch.cuda.ExternalStream": "side "
    "streams", "torch.cuda.set_stream": "side streams", "torch.cuda.graph": "graph capture", "torch.cuda.graphs":
    "graph capture", "torch.cuda.CUDAGraph": "graph capture", "torch.cuda.Event": "timing", "torch.cuda.cudart":
    "the CUDA runtime", "torch.xpu.Stream": "side streams", "torch.xpu.stream": "side streams",
    "torch.xpu.Event": "timing", "torch.set_float32_matmul_precision": "global precision",
    "torch.set_default_dtype": "global settings", "torch.set_default_device": "global settings",
    "torch.set_flush_denormal": "global settings", "torch.use_deterministic_algorithms": "global settings",
    "triton.compiler": "the Triton compiler", "triton.compile": "the Triton compiler", "triton.backends": "Triton "
    "drivers", "triton.runtime.jit": "Triton's JIT", "triton.runtime.interpreter": "Triton's interpreter",
    "triton.runtime.build": "native code", "triton.runtime.cache": "Triton's cache", "triton.knobs": "Triton settings",
}
# PyTorch's documented wrapper of a Triton kernel as a custom op: the op's body is the file's own
# function, which the dispatch audit runs under itself (audit.candidate_op_body)
TRITON_OPS = frozenset({"torch.library.triton_op", "torch.library.wrap_triton"})
FORBIDDEN_NAMES = {"eval": "dynamic code", "exec": "dynamic code", "compile": "dynamic code",
                   "__import__": "dynamic imports", "globals": "introspection", "locals": "introspection",
                   "vars": "introspection", "breakpoint": "the debugger", "open": "files", "memoryview": "raw memory"}
ALLOWED_DUNDERS = {"__init__", "__name__", "__qualname__", "__doc__", "__version__", "__call__", "__getitem__",
                   "__len__", "__repr__", "__str__", "__enter__", "__exit__", "__post_init__", "__all__", "__main__"}
FORBIDDEN_METHODS = {"__del__", "__torch_function__", "__torch_dispatch__", "__getattr__", "__getattribute__",
                     "__setattr__", "__delattr__", "__init_subclass__", "__set_name__", "__class_getitem__",
                     "__reduce__", "__reduce_ex__", "__instancecheck__", "__subclasscheck__", "__get__", "__set__",
                     "__delete__", "__new__", "__array_function__", "__array_ufunc__"}
FRAME_ATTRS = {"f_back", "f_locals", "f_globals", "f_code", "f_builtins", "gi_frame", "gi_code", "cr_frame",
               "ag_frame", "tb_frame", "tb_next", "co_code", "func_globals"}
JIT_BUILTINS = {"range", "min", "max", "len", "int", "float", "bool", "abs", "print", "isinstance", "tuple", "zip",
                "enumerate", "list"}
JIT_BLOCKED_ATTRS = {"handle", "data", "numpy", "tolist", "item", "cpu", "storage"}


@dataclass
class Scope:
    """What the whole-file scan knows: import aliases and names bound to module objects."""

    aliases: dict[str, str]
    module_names: set[str] = field(default_factory=set)


def dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def import_aliases(tree: ast.Module) -> dict[str, str]:
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


def bind_module_names(tree: ast.Module, aliases: dict[str, str]) -> dict[str, str]:
    """Names assigned a module path (`ops = torch.nn.functional`) become aliases too: patching through
    them is patching the module."""
    roots = {v.split(".")[0] for v in aliases.values()} | {"torch", "triton"}
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute | ast.Name):
                path = dotted(node.value, aliases)
                if path and path.split(".")[0] in roots and path != aliases.get(getattr(node.value, "id", ""), None):
                    for t in node.targets:
                        if isinstance(t, ast.Name) and aliases.get(t.id) != path:
                            aliases[t.id] = path
                            changed = True
    return aliases


def _finding(node: ast.AST, check: str, message: str) -> Finding:
    return Finding(check=check, line=getattr(node, "lineno", None), message=message)


def escape_findings(tree: ast.Module, aliases: dict[str, str], allowed: Iterable[str] = ()) -> list[Finding]:
    """Every escape route in the file, each with its line; `allowed` is the torch allowance as given."""
    out: list[Finding] = []
    aten_ops = {a.strip() for a in allowed if _aten_op(a.strip())}
    roots = {v.split(".")[0] for v in aliases.values()}
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    # names bound to code: functions, classes, lambdas, imports (never a constexpr's value)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    defined |= {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda)
                for t in n.targets if isinstance(t, ast.Name)} | set(aliases) | _BUILTIN_CALLABLES
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            out += _imports(node)
        elif isinstance(node, ast.Attribute):
            out += _attribute(node, aliases, roots, outermost=id(node) not in inner, aten_ops=aten_ops)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in FORBIDDEN_NAMES:
                out.append(_finding(node, "sandbox", f"uses `{node.id}` ({FORBIDDEN_NAMES[node.id]})"))
            elif node.id.startswith("__") and node.id.endswith("__") and node.id not in ALLOWED_DUNDERS:
                out.append(_finding(node, "sandbox", f"uses `{node.id}` (introspection)"))
        elif isinstance(node, ast.Call):
            out += _call(node, aliases, roots, aten_ops, defined)
        elif isinstance(node, ast.ClassDef):
            out += _class(node, aliases)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = (node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target])
            for t in targets:
                base = t.value if isinstance(t, ast.Subscript) else t
                path = dotted(base, aliases) if isinstance(base, ast.Attribute) else None
                if path and path.split(".")[0] in roots:
                    out.append(_finding(node, "monkey-patch", f"assigns `{ast.unparse(t)}`: patching torch, triton "
                                                              "or any imported module is not allowed"))
    return out


def _imports(node: ast.Import | ast.ImportFrom) -> list[Finding]:
    if isinstance(node, ast.ImportFrom) and node.level:
        return [_finding(node, "sandbox", "relative import: a kernel file stands alone")]
    mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [
        f"{node.module}.{a.name}" for a in node.names]
    out = []
    for mod in mods:
        root = mod.split(".")[0]
        if root in FORBIDDEN_IMPORTS:
            out.append(_finding(node, "sandbox", f"imports `{mod}` ({FORBIDDEN_IMPORTS[root]}: not allowed in a "
                                                 "kernel file)"))
        elif (why := _forbidden_path(mod)) is not None:
            out.append(_finding(node, "sandbox", f"imports `{mod}` ({why})"))
        elif mod.split(".")[-1].endswith("_pytorch") or mod.split(".")[-1] == "reference":
            out.append(_finding(node, "reference-import", f"imports the reference module `{mod}`"))
    return out


def _forbidden_path(path: str) -> str | None:
    parts = path.split(".")
    if parts[0] in FORBIDDEN_IMPORTS:
        return FORBIDDEN_IMPORTS[parts[0]]
    if parts[0] in ("torch", "triton") and any(p.startswith("_") and not (p.startswith("__") and p.endswith("__"))
                                               for p in parts[1:]):
        return "private torch/triton internals"
    if path in TRITON_OPS:
        return None
    for key, why in FORBIDDEN_TORCH.items():
        if path == key or path.startswith(key + "."):
            return why
    if parts[0] in PARTIAL_MODULES and len(parts) > 1:
        allowed, why = PARTIAL_MODULES[parts[0]]
        if ".".join(parts[1:]) not in allowed:
            return why
    return None


def _aten_op(path: str) -> bool:
    """`torch.ops.aten.<op>` or `torch.ops.aten.<op>.<overload>`, public names only."""
    parts = path.split(".")
    return (parts[:3] == ["torch", "ops", "aten"] and len(parts) in (4, 5)
            and all(p.isidentifier() and not p.startswith("_") for p in parts[3:]))


def _attribute(node: ast.Attribute, aliases: dict[str, str], roots: set[str], *, outermost: bool,
               aten_ops: set[str] = frozenset()) -> list[Finding]:
    out = []
    if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in ALLOWED_DUNDERS:
        out.append(_finding(node, "sandbox", f"reads `.{node.attr}` (introspection)"))
    elif node.attr in FRAME_ATTRS:
        out.append(_finding(node, "sandbox", f"reads `.{node.attr}` (frames and code objects)"))
    elif node.attr.startswith("register_") and "hook" in node.attr or node.attr.startswith("register_module_"):
        out.append(_finding(node, "sandbox", f"`.{node.attr}`: hooks run code the verifier does not see"))
    path = dotted(node, aliases) if outermost else None
    if path and path.split(".")[0] in roots | {"torch", "triton", *PARTIAL_MODULES}:
        why = _forbidden_path(path)
        if why is not None and not _is_prefix_of_allowed(path) and path not in aten_ops:
            out.append(_finding(node, "sandbox", f"uses `{path}` ({why})"))
    return out


def _is_prefix_of_allowed(path: str) -> bool:
    """`os.environ` is read as a step to `os.environ.get`: judged at the full path."""
    parts = path.split(".")
    return parts[0] == "os" and ".".join(parts[1:]) in {"path", "environ"}


def _call(node: ast.Call, aliases: dict[str, str], roots: set[str] = frozenset(),
          aten_ops: set[str] = frozenset(), defined: set[str] = frozenset()) -> list[Finding]:
    name = dotted(node.func, aliases) or ""
    out = []
    if name in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) >= 2:
        attr = node.args[1]
        if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)):
            if name != "hasattr":
                out.append(_finding(node, "sandbox", f"`{name}` with a computed name (dynamic attribute access)"))
        elif attr.value.startswith("_"):
            out.append(_finding(node, "sandbox", f"`{name}(..., '{attr.value}')` reaches a private attribute"))
        else:  # a literal name is the attribute itself: every rule of `obj.name` applies (red team 6, a55)
            same = ast.copy_location(ast.Attribute(value=node.args[0], attr=attr.value, ctx=ast.Load()), node)
            out += _attribute(same, aliases, roots, outermost=True, aten_ops=aten_ops)
        if isinstance(attr, ast.Constant) and name in ("setattr", "delattr"):
            root = (dotted(node.args[0], aliases) or "").split(".")[0]
            if root in {v.split(".")[0] for v in aliases.values()}:
                out.append(_finding(node, "monkey-patch", f"{name} on `{ast.unparse(node.args[0])}`"))
    elif name in ("triton.language.constexpr", "triton.language.core.constexpr") and node.args \
            and not _constant_value(node.args[0], aliases, defined):
        out.append(_finding(node, "sandbox", f"`{ast.unparse(node)}` wraps a value that is not a constant: a "
                                             "constexpr holds a number, a string, a bool or a tl dtype (a host "
                                             "function inside one runs as host code in a kernel, red team 7)"))
    elif name == "type" and len(node.args) == 3:
        out.append(_finding(node, "sandbox", "`type(name, bases, dict)` builds a class at run time"))
    elif name in ("os.environ.update", "os.environ.setdefault", "os.environ.pop", "os.putenv", "os.unsetenv"):
        out.append(_finding(node, "sandbox", f"`{name}` changes the environment"))
    return out


def _tensor_type(obj: object) -> bool:
    import torch

    return isinstance(obj, type) and issubclass(obj, torch.Tensor)


def _class(node: ast.ClassDef, aliases: dict[str, str]) -> list[Finding]:
    out = []
    for kw in node.keywords:
        if kw.arg == "metaclass":
            out.append(_finding(node, "sandbox", f"class {node.name} sets a metaclass"))
    for base in node.bases:
        real = resolve(dotted(base, aliases) or "")  # by the class reached (nn.Parameter is a Tensor too)
        if (dotted(base, aliases) or "").split(".")[-1] in ("Tensor", "TensorBase") or _tensor_type(real):
            out.append(_finding(node, "sandbox", f"class {node.name} subclasses torch.Tensor: outputs and inputs "
                                                 "must be plain tensors"))
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name in FORBIDDEN_METHODS:
            out.append(_finding(item, "sandbox", f"class {node.name} defines `{item.name}`: it runs behind the "
                                                 "harness's back"))
    return out


# ---------------------------------------------------------------- @triton.jit bodies


def jit_findings(body: ast.FunctionDef, jit_names: set[str], host_functions: set[str],
                 aliases: dict[str, str]) -> list[Finding]:
    """A jit body calls jit functions, tl/triton APIs, its own (constexpr) parameters and a few builtins."""
    out = []
    params = {a.arg for a in body.args.args + body.args.kwonlyargs + body.args.posonlyargs}
    # the body only: decorators (an autotune's prune function, its configs) run on the host by design
    inside = [n for stmt in body.body for n in ast.walk(stmt)]
    callees = {id(n.func) for n in inside if isinstance(n, ast.Call)}
    for node in inside:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                if func.id in jit_names or func.id in params or func.id in JIT_BUILTINS:
                    continue
                out.append(_finding(node, "jit-body", f"@triton.jit `{body.name}` calls `{func.id}`, which is not a "
                                                      "@triton.jit function: kernels may call only jit functions "
                                                      "and tl/triton APIs"))
            elif isinstance(func, ast.Attribute):
                path = dotted(func, aliases) or ""
                root = path.split(".")[0]
                if root == "triton":
                    why = triton_path_refusal(path)
                    if why is not None:
                        out.append(_finding(node, "jit-body", f"@triton.jit `{body.name}` calls `{path}`: {why}"))
                    continue
                if (root in params) or root in jit_names:
                    continue
                if root in aliases or root in host_functions:
                    out.append(_finding(node, "jit-body", f"@triton.jit `{body.name}` calls `{path}`: kernels may "
                                                          "call only jit functions and tl/triton APIs"))
                elif func.attr in JIT_BLOCKED_ATTRS:
                    out.append(_finding(node, "jit-body", f"@triton.jit `{body.name}` calls `.{func.attr}()` on a "
                                                          "value: that reaches host data"))
        elif isinstance(node, ast.Attribute) and (node.attr in JIT_BLOCKED_ATTRS or node.attr.startswith("_")):
            out.append(_finding(node, "jit-body", f"@triton.jit `{body.name}` reads `.{node.attr}`"))
        elif isinstance(node, ast.Attribute) and id(node) not in callees and \
                (dotted(node, aliases) or "").split(".")[0] == "triton" and \
                (why := triton_path_refusal(dotted(node, aliases) or "")) is not None:
            out.append(_finding(node, "jit-body", f"@triton.jit `{body.name}` reads `{dotted(node, aliases)}`: {why}"))
        elif (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in host_functions
              and id(node) not in callees):
            out.append(_finding(node, "jit-body", f"@triton.jit `{body.name}` uses host function `{node.id}`"))
    return out


_BUILTIN_CALLABLES = frozenset(n for n in dir(__import__("builtins")) if callable(getattr(__import__("builtins"), n)))


def _constant_value(node: ast.AST, aliases: dict[str, str], defined: set[str] = frozenset()) -> bool:
    """A literal (signed), a name not bound to code (a module constant, a parameter: what it holds at a
    launch is judged there, launch_record.py), arithmetic of these, or a `tl` dtype."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id not in defined
    if isinstance(node, ast.UnaryOp | ast.BinOp):
        return all(_constant_value(c, aliases, defined) for c in ast.iter_child_nodes(node)
                   if isinstance(c, ast.expr))
    path = dotted(node, aliases) if isinstance(node, ast.Attribute) else None
    return bool(path) and path.startswith("triton.language.") and triton_path_refusal(path) is None \
        and not callable(_resolve(path))


def _resolve(path: str) -> object:
    import importlib

    parts = path.split(".")
    obj: object = importlib.import_module(parts[0])
    for name in parts[1:]:
        obj = getattr(obj, name, None)
    return obj


def triton_path_refusal(path: str) -> str | None:
    """Why a dotted path from `triton` in a jit body leaves Triton (None where it stays inside): every module
    on the way must be Triton's own, and the object it ends in defined by Triton. `triton.language.core`
    imports `typing` and `builtins`, so `triton.language.core.typing.sys.modules` reached numpy and the
    harness's own modules from a kernel body (red team 7, a46b, a99). An allowlist walk, not a list of names."""
    import importlib
    import types

    parts = path.split(".")
    try:
        obj: object = importlib.import_module(parts[0])
    except ImportError:
        return None
    for i, name in enumerate(parts[1:], start=1):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[: i + 1]))
            except ImportError:
                return None  # not resolvable here: a runtime value's attribute, judged at run time
        if isinstance(obj, types.ModuleType):
            if not obj.__name__.startswith("triton"):
                return f"`{'.'.join(parts[: i + 1])}` is the module `{obj.__name__}`, not Triton's"
            continue
        owner = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "") or ""
        if not owner.startswith("triton"):
            return f"`{'.'.join(parts[: i + 1])}` is {type(obj).__name__} from `{owner}`, not a Triton API"
        return None
    return None


def launch_keyword_findings(tree: ast.Module, host_functions: set[str]) -> list[Finding]:
    """`kernel[grid](..., ACT=host_fn)`: a host function passed as a constexpr runs as host Python."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            for value in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(value, ast.Name) and value.id in host_functions:
                    out.append(_finding(node, "jit-body", f"a launch passes host function `{value.id}` to a kernel"))
    return out
