"""The host subset's tables: what a kernel file's host code may import, name and reach.

Shared by the static check (host_subset.py, in the parent, which never imports torch) and the
run-time guard (guarded.py, in the candidate's process), so both apply one definition. The torch
tables are checked against the installed torch by tests (a new torch submodule fails a test, not
open a route).
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
from typing import Any

# modules a kernel file may import, and for some the only names it may use from them (None: any
# public name); torch and triton have their own rules below
MODULES: dict[str, frozenset[str] | None] = {
    "torch": None, "torch.nn": None, "torch.nn.functional": None, "torch.nn.init": None, "triton": None,
    "triton.language": None, "triton.language.extra": None, "triton.language.extra.libdevice": None,
    "triton.language.math": None, "triton.tools": None, "triton.tools.tensor_descriptor": None,
    "math": None, "itertools": None, "__future__": None, "numbers": None,
    # typing's reflective helpers (get_type_hints, ForwardRef evaluate strings) are not host code's
    "typing": frozenset({"Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Callable",
                         "Sequence", "Iterable", "Iterator", "Mapping", "MutableMapping", "NamedTuple", "TypeVar",
                         "Generic", "Literal", "ClassVar", "Final", "Protocol", "Annotated", "TYPE_CHECKING",
                         "Type", "cast", "overload", "Hashable", "Sized", "Collection", "DefaultDict",
                         "OrderedDict", "Deque", "TypeAlias", "Self", "NoReturn", "SupportsInt", "SupportsFloat",
                         "SupportsIndex", "final", "runtime_checkable", "ParamSpec", "Concatenate", "Never"}),
    "functools": frozenset({"reduce", "partial", "lru_cache", "cache", "cached_property", "wraps", "total_ordering"}),
    "dataclasses": frozenset({"dataclass", "field", "fields", "replace", "asdict", "astuple", "InitVar"}),
    "collections": frozenset({"namedtuple", "OrderedDict", "defaultdict", "deque", "Counter"}),
    "enum": frozenset({"Enum", "IntEnum", "auto"}),
    "warnings": frozenset({"warn"}),
    # not os.environ / getenv: the worker's environment (TRITON_INTERPRET, PYTHONUNBUFFERED) tells a check
    # from production, and a kernel's result may not depend on the environment it runs in
    "os": frozenset({"cpu_count", "path", "path.join", "path.basename", "path.dirname", "sep", "abort"}),
    "sys": frozenset({"version_info", "version", "maxsize", "float_info", "byteorder", "platform"}),
    "time": frozenset({"sleep"}),
}
# torch's own submodules (tests keep this list complete for the installed torch); a path through one
# of them is allowed only where HOST_TORCH_MODULES says
TORCH_SUBMODULES = frozenset({
    "accelerator", "amp", "ao", "autograd", "backends", "builtins", "classes", "compiler", "cpp", "cpu", "ctypes",
    "cuda", "distributed", "distributions", "export", "fft", "func", "functional", "functools", "futures", "fx",
    "glob", "hub", "importlib", "inspect", "jit", "library", "linalg", "masked", "math", "monitor", "mps", "mtia",
    "multiprocessing", "nested", "nn", "ops", "optim", "os", "overrides", "package", "platform", "profiler",
    "quantization", "quasirandom", "random", "return_types", "serialization", "signal", "sparse", "special",
    "storage", "sys", "testing", "textwrap", "threading", "torch", "torch_version", "types", "utils", "version",
    "warnings", "windows", "xpu", "onnx", "contrib", "_C"})
DEVICE_QUERIES = frozenset({"is_available", "get_device_properties", "current_device", "device_count",
                            "get_device_name", "get_device_capability", "synchronize"})
# torch submodules host code may use, and the names allowed in each (None: any public name)
HOST_TORCH_MODULES: dict[str, frozenset[str] | None] = {
    "nn": None, "nn.functional": None, "nn.init": None, "nn.parameter": None, "nn.modules": None,
    "nn.common_types": None, "linalg": None, "special": None, "fft": None, "functional": None,
    "cuda": DEVICE_QUERIES, "xpu": DEVICE_QUERIES, "version": None, "types": None,
    "autograd": frozenset({"Function"}),
    "library": frozenset({"triton_op", "wrap_triton"}),  # a custom op whose body is the file's own function  # the Liger / flash-attn wrapper: its forward is the file's own code
}
TORCH_NN_SUBMODULES = frozenset({"attention", "common_types", "functional", "grad", "init", "intrinsic", "modules",
                                 "parallel", "parameter", "qat", "quantizable", "quantized", "utils"})
# top-level torch functions that act on the process, files or the compiler, not on tensors
TORCH_REFUSED = frozenset({
    "compile", "load", "save", "from_file", "from_numpy", "frombuffer", "set_default_dtype", "set_default_device",
    "set_default_tensor_type", "set_float32_matmul_precision", "set_flush_denormal", "use_deterministic_algorithms",
    "set_num_threads", "set_num_interop_threads", "set_printoptions", "set_warn_always", "set_anomaly_enabled",
    "set_deterministic_debug_mode", "cond", "while_loop", "vmap", "export",
    "Stream", "Event", "get_device_module",
    "set_autocast_enabled", "autocast", "enable_grad", "UntypedStorage", "TypedStorage", "ByteStorage",
    "FloatStorage", "DoubleStorage", "HalfStorage", "IntStorage", "LongStorage", "BFloat16Storage",
})
# triton paths host code may use (a prefix allows what lies below it)
TRITON_ALLOWED = ("triton.jit", "triton.autotune", "triton.heuristics", "triton.Config", "triton.cdiv",
                  "triton.next_power_of_2", "triton.language", "triton.set_allocator", "triton.constexpr",
                  "triton.tools.tensor_descriptor", "triton.runtime.driver.active.get_current_device",
                  "triton.runtime.driver.active.get_current_target",
                  "triton.runtime.driver.active.utils.get_device_properties")
# builtins host code may name; getattr and hasattr are guarded at run time (guarded.py)
BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "callable", "chr", "classmethod", "complex", "dict", "divmod",
    "enumerate", "filter", "float", "format", "frozenset", "getattr", "hasattr", "hash", "hex", "id", "int",
    "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "oct", "ord", "pow",
    "print", "property", "range", "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod", "str",
    "sum", "super", "tuple", "zip", "bytes", "NotImplemented", "Ellipsis", "True", "False", "None", "__name__",
    "Exception", "ValueError", "TypeError", "RuntimeError", "KeyError", "IndexError", "AssertionError",
    "NotImplementedError", "ArithmeticError", "ZeroDivisionError", "OverflowError", "AttributeError",
    "StopIteration", "LookupError", "Warning", "UserWarning", "RuntimeWarning", "ImportError", "ModuleNotFoundError",
})
# attributes that lead into frames, code, generators, tracebacks and functions' internals
INTERNALS = frozenset({
    "f_back", "f_locals", "f_globals", "f_code", "f_builtins", "f_trace", "f_lasti", "f_lineno", "gi_frame",
    "gi_code", "gi_yieldfrom", "gi_running", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code", "ag_await",
    "tb_frame", "tb_next", "tb_lasti", "co_code", "co_consts", "co_names", "co_varnames", "co_filename",
    "func_globals", "func_closure", "func_code", "im_func", "im_self", "cell_contents",
})
# tensor methods that hand tensor data or its memory to host Python
HOST_EXIT_METHODS = frozenset({"item", "tolist", "numpy", "untyped_storage", "storage"})
# the one private attribute host code may read: a tensor's version counter (caches of packed weights)
PRIVATE_READS = frozenset({"_version"})
# nn.Module's own names: a kernel file's module class may not shadow them, nor store into them
# (tests keep this list complete for the installed torch)
NN_MODULE_NAMES = frozenset({
    "T_destination", "_apply", "_call_impl", "_compiled_call_impl", "_get_backward_hooks",
    "_get_backward_pre_hooks", "_get_name", "_load_from_state_dict", "_maybe_warn_non_full_backward_hook",
    "_named_members", "_register_load_state_dict_pre_hook", "_register_state_dict_hook",
    "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward", "_version", "_wrapped_call_impl",
    "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu", "cuda", "double",
    "dump_patches", "eval", "float", "get_buffer", "get_extra_state", "get_parameter", "get_submodule",
    "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
    "named_parameters", "parameters", "register_backward_hook", "register_buffer", "register_forward_hook",
    "register_forward_pre_hook", "register_full_backward_hook", "register_full_backward_pre_hook",
    "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_module",
    "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
    "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "type", "xpu",
    "zero_grad", "_backward_hooks", "_backward_pre_hooks", "_buffers", "_forward_hooks",
    "_forward_hooks_always_called", "_forward_hooks_with_kwargs", "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs", "_is_full_backward_hook", "_load_state_dict_post_hooks",
    "_load_state_dict_pre_hooks", "_modules", "_non_persistent_buffers_set", "_parameters", "_state_dict_hooks",
    "_state_dict_pre_hooks", "training", "forward", "extra_repr",
})
# what a module class may define although nn.Module has it
NN_MODULE_OVERRIDABLE = frozenset({"forward", "extra_repr"})
# dunder methods a class in a kernel file may define (the others run behind the harness's back)
DEFINABLE_DUNDERS = frozenset({"__init__", "__call__", "__repr__", "__str__", "__len__", "__getitem__", "__iter__",
                               "__contains__", "__eq__", "__hash__", "__enter__", "__exit__", "__post_init__",
                               "__lt__", "__le__", "__gt__", "__ge__", "__ne__", "__bool__", "__index__",
                               "__int__", "__float__"})


# where a function or class host code reaches may come from (its `__module__`'s root): the allowed
# modules and the C modules behind them; builtins only for the names host code may call anyway
ORIGINS = frozenset({"torch", "triton", "math", "itertools", "typing", "functools", "_functools", "dataclasses",
                     "collections", "_collections", "_collections_abc", "enum", "warnings", "_warnings", "os",
                     "posixpath", "ntpath", "posix", "nt", "sys", "time", "numbers", "abc"})
GUARDED = frozenset({"getattr", "hasattr"})
USER_MODULES = "xe_forge_user_"  # the module names import_from_path gives files without a name of their own
_USER_NAMES: set[str] = set()  # kernel files imported under their own stem (cases.module_name)


def mark_user_module(name: str) -> None:
    """A kernel file was imported as `name` (its own stem, as production imports it)."""
    _USER_NAMES.add(name)


def is_user_module(name: str) -> bool:
    """Whether `name` (a `__module__`) is a kernel file's own module."""
    root = name.split(".")[0]
    return root.startswith(USER_MODULES) or root in _USER_NAMES


def path_refusal(path: str) -> str | None:
    """Why host code may not use a dotted path into an imported module, or None if it may.

    `torch.nn.functional.gelu`, `triton.cdiv`, `math.sqrt`, `os.environ.get` pass; a private
    name, `torch.jit`, `torch.cuda.Stream`, `triton.runtime.jit`, `functools.update_wrapper` do not.
    The tables are of objects, not spellings: the path is also walked (import, then getattr) and every
    module a step reaches must itself be allowed under its own name (`torch.nn.init.torch.threading` is
    `threading`, `typing.sys.modules` is `sys.modules`), and every function or class it reaches must come
    from an allowed module (`reached_refusal`).
    """
    why = _table_refusal(path)
    return why if why is not None else _walk_refusal(path)


def resolve(path: str) -> Any:
    """The object a dotted path from an allowed root reaches (import, then getattr), else None."""
    parts = path.split(".")
    if _table_refusal(parts[0]) is not None:
        return None
    try:
        obj = importlib.import_module(parts[0])
        for name in parts[1:]:
            obj = getattr(obj, name)
    except Exception:  # an unknown name: not ours to guess
        return None
    return obj


@functools.lru_cache(maxsize=8192)
def _walk_refusal(path: str) -> str | None:
    parts = path.split(".")
    if parts[0] == "__future__" or _table_refusal(parts[0]) is not None:
        return None
    try:
        obj = importlib.import_module(parts[0])
    except Exception:
        return None
    canon = parts[0]
    for i, name in enumerate(parts[1:], 2):
        try:
            obj = getattr(obj, name)
        except Exception:  # not there: Python raises AttributeError at run time
            return None
        spelled = ".".join(parts[:i])
        if isinstance(obj, types.ModuleType):  # the submodule itself (os.path too), else re-rooted at its name
            canon = spelled if sys.modules.get(spelled) is obj else obj.__name__
            why = _table_refusal(canon) if canon != spelled else None
        else:
            canon = f"{canon}.{name}"
            why = (_table_refusal(canon) if canon != spelled else None) or reached_refusal(obj, name)
        if why is not None:
            return f"`{spelled}` is `{canon}`: {why}" if canon != spelled else why
    return None


def reached_refusal(obj: Any, name: str) -> str | None:
    """Why host code may not hold this object (reached by attribute `name`), or None: a module must be
    allowed under its own name; a function or class must come from an allowed module (no
    `operator.attrgetter`, no `threading.Thread`, whatever module re-exports it)."""
    if isinstance(obj, types.ModuleType):
        return _table_refusal(obj.__name__)
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
        origin = str(getattr(obj, "__module__", None) or "").split(".")[0]
        if is_user_module(origin):  # the kernel file's own functions and classes
            return None
        if origin == "builtins":
            own = getattr(obj, "__name__", name)
            return None if own in BUILTINS and own not in GUARDED else f"the builtin `{own}` is not host code's"
        if origin not in ORIGINS:
            return f"it comes from `{origin}`, not a module a kernel file may use"
    return None


def _table_refusal(path: str) -> str | None:
    parts = path.split(".")
    if any(p.startswith("_") and p != "__future__" for p in parts):
        return "a private name"
    root = parts[0]
    if root == "torch":
        return _torch_refusal(parts[1:])
    if root == "triton":
        if len(parts) == 1 or any(path == a or path.startswith(a + ".") or a.startswith(path + ".")
                                  for a in TRITON_ALLOWED):
            return None
        return "Triton's internals (the launcher, compiler, cache and testing tools are the harness's)"
    for depth in range(len(parts), 0, -1):
        module = ".".join(parts[:depth])
        if module in MODULES:
            names = MODULES[module]
            rest = ".".join(parts[depth:])
            if names is None or not rest or rest in names:
                return None
            return f"`{module}` is allowed for {', '.join(sorted(names))} only"
    return f"`{root}` is not a module a kernel file may import"


def _torch_refusal(rest: list[str]) -> str | None:
    if not rest:
        return None
    head = rest[0]
    if head in TORCH_SUBMODULES:
        if head == "nn" and len(rest) > 1 and rest[1] in TORCH_NN_SUBMODULES:
            key, names = ".".join(rest[:2]), HOST_TORCH_MODULES.get(".".join(rest[:2]), frozenset())
            tail = rest[2:]
        else:
            key, names, tail = head, HOST_TORCH_MODULES.get(head, frozenset()), rest[1:]
        if key not in HOST_TORCH_MODULES:
            return f"`torch.{key}` is not for kernel files (only nn, nn.functional, nn.init, linalg, special, " \
                   "fft, autograd.Function and the device queries of cuda/xpu are)"
        if names is not None and tail and tail[0] not in names:
            return f"`torch.{key}` is allowed for {', '.join(sorted(names))} only"
        return None
    if head in TORCH_REFUSED:
        return "process-wide settings, files, compilers and raw storages are not a kernel's"
    return None
