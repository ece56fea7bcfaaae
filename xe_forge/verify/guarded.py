"""The host subset at run time: the builtins a kernel file's module executes with.

The static check (host_subset.py) reads every literal attribute and name; what no AST shows is a
name computed at run time. So the candidate's module (and the baseline's) is executed with a
builtins table of the allowed names only, where `getattr`/`hasattr` apply the same rules as the
static check to the name actually asked for, and `__import__` admits the allowed modules only.
A refusal is recorded here (the harness reads it after each request and fails the candidate for
it, whatever the candidate's code did with the exception) and raised.
"""

from __future__ import annotations

import builtins
import inspect
import types
from typing import Any

from xe_forge.verify.subset_rules import (
    BUILTINS,
    INTERNALS,
    NN_MODULE_NAMES,
    PRIVATE_READS,
    is_user_module,
    path_refusal,
    reached_refusal,
)

_REFUSALS: list[str] = []
_MISSING = object()


class SubsetRefusal(Exception):
    """Host code asked for something outside the subset."""


def refusals() -> list[str]:
    """What was refused since the last call, and forget it."""
    out = list(dict.fromkeys(_REFUSALS))
    _REFUSALS.clear()
    return out


def _refuse(what: str) -> None:
    _REFUSALS.append(what)
    raise SubsetRefusal(what)


def _own(cls: type) -> bool:
    return is_user_module(str(getattr(cls, "__module__", "")))


def attribute_refusal(obj: Any, name: str) -> str | None:
    """Why `getattr(obj, name)` may not run for host code, or None: the static rules, on real objects."""
    if name in INTERNALS:
        return "frames', code objects' and functions' internals"
    if name.startswith("__") and name.endswith("__"):
        return "a dunder attribute"
    if name.startswith("_"):
        if name in PRIVATE_READS or (_own(type(obj)) and name not in NN_MODULE_NAMES):
            return None
        return "a private name"
    if isinstance(obj, types.ModuleType):
        return path_refusal(f"{obj.__name__}.{name}")
    if isinstance(obj, type) and _own(obj) and isinstance(inspect.getattr_static(obj, name, None),
                                                          types.FunctionType):
        return "a method taken from its class (methods are called on instances)"
    return None


def guarded_getattr(obj: Any, name: Any, default: Any = _MISSING) -> Any:
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    why = attribute_refusal(obj, name)
    if why is not None:
        _refuse(f"getattr(..., {name!r}) reaches {why}")
    value = getattr(obj, name) if default is _MISSING else getattr(obj, name, default)
    if isinstance(value, types.ModuleType):
        _refuse(f"getattr(..., {name!r}) returns the module `{value.__name__}`: a module is reached only through "
                "its dotted names")
    why = reached_refusal(value, name)
    if why is not None:
        _refuse(f"getattr(..., {name!r}) reaches {why}")
    return value


def guarded_hasattr(obj: Any, name: Any) -> bool:
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    why = attribute_refusal(obj, name)
    if why is not None:
        _refuse(f"hasattr(..., {name!r}) reaches {why}")
    return hasattr(obj, name)


def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    if level:
        _refuse(f"a relative import of {name!r}")
    why = path_refusal(name)
    if why is None:
        why = next((w for item in fromlist or () if (w := path_refusal(f"{name}.{item}")) is not None), None)
    if why is not None:
        _refuse(f"import of {name!r}: {why}")
    return builtins.__import__(name, globals, locals, fromlist, level)


def builtins_table() -> dict[str, Any]:
    """The builtins a kernel file runs with: the allowed names, guarded where a name is computed."""
    table = {name: getattr(builtins, name) for name in BUILTINS if hasattr(builtins, name)}
    table.update(getattr=guarded_getattr, hasattr=guarded_hasattr, __import__=guarded_import,
                 __build_class__=builtins.__build_class__, __name__="builtins")
    return table
