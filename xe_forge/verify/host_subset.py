"""Host code as an allowed subset of Python, checked on the AST (the parent never imports the file).

Host code is everything a kernel file runs outside a @triton.jit body: module level, class bodies,
forward, helpers, launchers, grid callables, hooks. Instead of forbidding what attacks were seen,
it may only do what host code needs (tables in subset_rules.py):
- import the allowed modules only (torch, triton, math, functools, ... with the names they allow);
- name only what the file binds, or an allowed builtin: a name the interpreter (or anything else)
  left in the module's globals is not reachable; scopes are Python's own (symtable);
- use a module only through its dotted names (never as a value: no `[torch][0].ops`), each path
  checked (torch minus process settings, files, compilers; Triton's public launch API only);
- read attributes by literal name only, never an underscore name (except the file's own
  single-underscore attributes on `self`, and a tensor's `_version`), never frames', code
  objects' or functions' internals; `getattr` with a literal name is the same attribute;
- assign or delete attributes only on what the file created: `self` (or `cls`) inside a method of
  one of its own classes, never a name nn.Module uses; no stores into module paths; methods are
  called on instances (`Launcher.run(other)` would hand a foreign object to `self`);
- format strings are literals whose fields obey the same attribute rule;
- module classes define only the dunders host code needs and never shadow nn.Module's API;
- tensor data never leaves for host Python (`.item()`, `.tolist()`, `.numpy()`, storages) where the
  receiver can be a tensor; the dispatch audit refuses the spellings no AST shows (`float(t)`).
At run time the file's builtins are the allowed ones, with `getattr`/`hasattr`/`__import__`
guarded by the same tables (guarded.py), and the dispatch audit attributes torch work by frames.
"""

from __future__ import annotations

import ast
import functools
import importlib
import string
import symtable
import types

from xe_forge.verify.backward_only import BACKWARD_PATHS, enclosing_chains, inside
from xe_forge.verify.host_scopes import Scopes, bound_in
from xe_forge.verify.models import Finding
from xe_forge.verify.receivers import python_receiver
from xe_forge.verify.subset_rules import (
    BUILTINS,
    DEFINABLE_DUNDERS,
    HOST_EXIT_METHODS,
    INTERNALS,
    MODULES,
    NN_MODULE_NAMES,
    NN_MODULE_OVERRIDABLE,
    PRIVATE_READS,
    TORCH_NN_SUBMODULES,
    TORCH_SUBMODULES,
    path_refusal,
)

CHECK = "host-subset"


def _finding(node: ast.AST, message: str, check: str = CHECK, hint: str | None = None) -> Finding:
    return Finding(check=check, line=getattr(node, "lineno", None), message=message, hint=hint)


def is_module_path(path: str) -> bool:
    """Whether a dotted path names a module: by what it resolves to where it can be resolved
    (`triton.language.float32` is a dtype, `triton.language` a module), else by the tables below."""
    resolved = _resolves_to_module(path)
    if resolved is not None:
        return resolved
    parts = path.split(".")
    if path in MODULES:
        return True
    if parts[0] == "torch" and len(parts) == 2:
        return parts[1] in TORCH_SUBMODULES
    if parts[:2] == ["torch", "nn"] and len(parts) == 3:
        return parts[2] in TORCH_NN_SUBMODULES
    return parts[0] == "triton" and (len(parts) == 1 or parts[1] in ("language", "tools", "runtime", "compiler",
                                                                      "backends", "testing", "knobs"))


@functools.lru_cache(maxsize=4096)
def _resolves_to_module(path: str) -> bool | None:
    """True/False when `path` walks from an importable root (torch, triton) to a module or to something
    else; None where it does not resolve (the tables decide then)."""
    parts = path.split(".")
    if parts[0] not in ("torch", "triton"):
        return None
    try:
        obj = importlib.import_module(parts[0])
        for i, name in enumerate(parts[1:], start=2):
            if hasattr(obj, name) or not isinstance(obj, types.ModuleType):
                obj = getattr(obj, name)
            else:  # a submodule not imported yet (`triton.tools.tensor_descriptor`): the file imports it
                obj = importlib.import_module(".".join(parts[:i]))
    except Exception:  # an unknown name: not ours to import or guess
        return None
    return isinstance(obj, types.ModuleType)


# ---------------------------------------------------------------- names (symtable)


def unbound_globals(source: str) -> set[str]:
    """Names some scope looks up as globals that the module never binds and no allowed builtin is."""
    top = symtable.symtable(source, "<kernel file>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    wanted: set[str] = set()
    stack = [top]
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        for sym in table.get_symbols():
            if table is top:
                if sym.is_referenced() and not (sym.is_assigned() or sym.is_imported()):
                    wanted.add(sym.get_name())
            elif sym.is_global():
                if sym.is_declared_global() and sym.is_assigned():
                    bound.add(sym.get_name())
                elif sym.is_referenced():
                    wanted.add(sym.get_name())
            elif table.get_type() == "class" and sym.is_referenced() and not sym.is_assigned() \
                    and not sym.is_free():
                wanted.add(sym.get_name())
    return wanted - bound - BUILTINS


# ---------------------------------------------------------------- the check


def subset_findings(tree: ast.Module, source: str, jit_ids: set[int], aliases: dict[str, str],
                    aten_ops: frozenset[str] = frozenset(), backward: set[int] | None = None) -> list[Finding]:
    """Every place the file's host code leaves the allowed subset (jit bodies are checked by their own rules).

    `aten_ops` are the full `torch.ops.aten.<op>.<overload>` names the allowance gives (as TorchInductor
    keeps library calls): torch work the audit meters, not an escape. `backward` are the ids of the
    functions only autograd's backward runs (backward_only.py): inside them, and only there, a recompute
    backward's `torch.enable_grad` and `torch.autograd.grad` are allowed too."""
    out: list[Finding] = []
    backward = backward or set()
    chains = enclosing_chains(tree) if backward else {}
    scopes = Scopes(tree, aliases)
    modules = {name for name, path in aliases.items() if _binds_module(tree, name, path)}
    jit_nodes = {id(n) for fn in ast.walk(tree) if id(fn) in jit_ids for n in ast.walk(fn) if n is not fn}
    kernels = {n.name for n in tree.body if id(n) in jit_ids or isinstance(n, ast.FunctionDef)
               and any(_names_triton_op(d) for d in n.decorator_list)}
    try:
        unbound = unbound_globals(source)
    except SyntaxError:
        unbound = set()
    bases = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    bases |= {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id in ("getattr", "hasattr") and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            out += _import(node)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in unbound:
                out.append(_finding(node, f"uses `{node.id}`, which the file neither defines nor imports (and which "
                                          "is not an allowed builtin)"))
            elif node.id in modules and id(node) not in bases and id(node) not in jit_nodes:
                out.append(_finding(node, f"uses the module `{node.id}` as a value: a module is reached only "
                                          "through its dotted names"))
        if id(node) in jit_nodes:
            continue
        if isinstance(node, ast.Attribute):
            out += _kernel_attribute(node, kernels, scopes)
            extra = aten_ops | BACKWARD_PATHS if inside(node, backward, chains) else aten_ops
            out += _attribute(node, scopes, aliases, modules, outermost=id(node) not in bases, aten_ops=extra)
        elif isinstance(node, ast.Call):
            out += _call(node, scopes, aliases, modules)
        elif isinstance(node, ast.ClassDef):
            out += _class(node, scopes)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                out += _store(node, t, scopes, aliases, modules)
    return out


def _names_triton_op(decorator: ast.AST) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")) == "triton_op"


def _kernel_attribute(node: ast.Attribute, kernels: set[str], scopes: Scopes) -> list[Finding]:
    """A kernel object of the file is launched (`k[grid](...)`), never reached into: its methods and
    lists (`add_pre_run_hook`, `pre_run_hooks`, an autotuner's `configs` and hooks) would make Triton
    call host code, even a torch function, where no call in the source shows it. A triton_op is only
    called: `register_kernel` and friends would run other code in production than the body checked."""
    if not isinstance(node.value, ast.Name) or node.value.id not in kernels:
        return []
    fn = scopes.enclosing.get(id(node))
    if fn is not None and node.value.id in bound_in(fn):
        return []
    return [_finding(node, f"reads `.{node.attr}` of the kernel `{node.value.id}`: the file's kernels are only "
                           "launched (`k[grid](...)`) and its triton ops only called, never reached into",
                     hint="launch the kernel with its grid; put host work in forward or a launcher function")]


def _binds_module(tree: ast.Module, name: str, path: str) -> bool:
    """Whether an import binds `name` to a module (not to a function such as `from triton import cdiv`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any((a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
    return is_module_path(path)


def _import(node: ast.Import | ast.ImportFrom) -> list[Finding]:
    if isinstance(node, ast.ImportFrom) and node.level:
        return [_finding(node, "relative import: a kernel file stands alone")]
    paths = [a.name for a in node.names] if isinstance(node, ast.Import) else [
        f"{node.module}.{a.name}" for a in node.names]
    out = []
    for path in paths:
        if path.endswith(".*"):
            out.append(_finding(node, f"`from {path[:-2]} import *`: names are imported one by one"))
            continue
        why = path_refusal(path)
        if why is not None:
            out.append(_finding(node, f"imports `{path}` ({why})"))
    return out


def _path(node: ast.AST, aliases: dict[str, str], modules: set[str]) -> str | None:
    """The dotted path of an attribute chain rooted at a module name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    root = aliases[node.id]
    if node.id not in modules and not parts:
        return root
    return ".".join([root, *reversed(parts)])


def _attr_refusal(attr: str, receiver_is_self: bool, store: bool = False) -> str | None:
    """Why an attribute name may not be used by literal name, or None."""
    if attr in INTERNALS:
        return "frames', code objects' and functions' internals"
    if attr.startswith("__") and attr.endswith("__"):
        return "a dunder attribute"
    if attr.startswith("_"):
        if attr in PRIVATE_READS and not store:
            return None
        if receiver_is_self and attr not in NN_MODULE_NAMES:
            return None
        return "a private name (only the file's own `self._name` attributes are its to use)"
    return None


def _is_super_init(node: ast.Attribute, scopes: Scopes) -> bool:
    """`super().__init__` (or `super(Cls, self).__init__`)."""
    call = node.value
    if node.attr != "__init__" or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    if call.func.id != "super":
        return False
    return not call.args or (len(call.args) == 2 and isinstance(call.args[0], ast.Name)
                             and call.args[0].id in scopes.classes and isinstance(call.args[1], ast.Name)
                             and scopes.receiver(call.args[1].id, call))


def _attribute(node: ast.Attribute, scopes: Scopes, aliases: dict[str, str], modules: set[str], *,
               outermost: bool, aten_ops: frozenset[str] = frozenset()) -> list[Finding]:
    out = []
    is_self = isinstance(node.value, ast.Name) and scopes.receiver(node.value.id, node)
    if isinstance(node.ctx, ast.Load) and not _is_super_init(node, scopes):
        why = _attr_refusal(node.attr, is_self)
        if why is not None:
            out.append(_finding(node, f"reads `.{node.attr}` ({why})"))
    path = _path(node, aliases, modules)
    if outermost and path is not None and not out and path not in aten_ops:
        why = path_refusal(path)
        if why is not None:
            out.append(_finding(node, f"uses `{path}` ({why})"))
        elif is_module_path(path) and isinstance(node.ctx, ast.Load):
            out.append(_finding(node, f"uses the module `{path}` as a value: a module is reached only through its "
                                      "dotted names"))
    if isinstance(node.value, ast.Name) and node.value.id in scopes.classes and isinstance(node.ctx, ast.Load) \
            and scopes.plain_method(node.value.id, node.attr):
        out.append(_finding(node, f"takes the method `{node.value.id}.{node.attr}` from its class: methods are called "
                                  "on instances (through the class, any object becomes `self`)"))
    return out


def _store(stmt: ast.AST, target: ast.AST, scopes: Scopes, aliases: dict[str, str], modules: set[str]) -> list[Finding]:
    out = []
    for node in ast.walk(target):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            owner = isinstance(node.value, ast.Name) and scopes.receiver(node.value.id, node)
            if isinstance(node.value, ast.Name) and scopes.context(node.value.id, node) \
                    and not node.attr.startswith("_"):
                continue
            if not owner:
                out.append(_finding(stmt, f"assigns `{ast.unparse(node)}`: host code assigns attributes only on "
                                          "`self` inside the file's own classes (never on torch, triton, modules "
                                          "or objects it did not create)", check="monkey-patch"))
            elif _attr_refusal(node.attr, True, store=True) is not None or node.attr in NN_MODULE_NAMES \
                    and node.attr not in NN_MODULE_OVERRIDABLE:
                out.append(_finding(stmt, f"assigns `{ast.unparse(node)}`: `{node.attr}` is nn.Module's own",
                                    check="monkey-patch"))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            if _path(node.value, aliases, modules) is not None:
                out.append(_finding(stmt, f"assigns into `{ast.unparse(node.value)}`, a module's object",
                                    check="monkey-patch"))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id.startswith("__") \
                and node.id.endswith("__") and node.id != "__all__":
            out.append(_finding(stmt, f"assigns `{node.id}`: dunder names belong to Python"))
    return out


def _call(node: ast.Call, scopes: Scopes, aliases: dict[str, str], modules: set[str]) -> list[Finding]:
    func = node.func
    out = []
    if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and len(node.args) >= 2:
        attr = node.args[1]
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            target = node.args[0]
            is_self = isinstance(target, ast.Name) and scopes.receiver(target.id, node)
            why = _attr_refusal(attr.value, is_self)
            path = _path(target, aliases, modules)
            why = why or (path_refusal(f"{path}.{attr.value}") if path is not None else None)
            if why is not None:
                out.append(_finding(node, f"`{func.id}(..., '{attr.value}')` reaches {why}"))
            if isinstance(target, ast.Name) and target.id in scopes.classes \
                    and scopes.plain_method(target.id, attr.value):
                out.append(_finding(node, f"takes the method `{target.id}.{attr.value}` from its class"))
    elif isinstance(func, ast.Name) and func.id == "super" and node.args and not _super_args_ok(node, scopes):
        out.append(_finding(node, "`super(...)` with arguments other than the class and `self`"))
    elif isinstance(func, ast.Attribute) and func.attr in ("format", "format_map"):
        out += _format(node, func)
    elif isinstance(func, ast.Attribute) and func.attr in HOST_EXIT_METHODS and not python_receiver(func.value, scopes.tree,
                                                                                                   scopes.classes):
        out.append(_finding(node, f"`.{func.attr}()` hands tensor data to host Python, where no audit sees what is "
                                  "computed", check="host-compute",
                            hint="keep the data in tensors and kernels: pass the tensor to the kernel and tl.load it"))
    return out


def _super_args_ok(node: ast.Call, scopes: Scopes) -> bool:
    return (len(node.args) == 2 and isinstance(node.args[0], ast.Name) and node.args[0].id in scopes.classes
            and isinstance(node.args[1], ast.Name) and scopes.receiver(node.args[1].id, node))


def _format(node: ast.Call, func: ast.Attribute) -> list[Finding]:
    """`"...".format(x)` looks attributes up by the names in the string: a literal, checked here."""
    text = func.value
    if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
        return [_finding(node, f"`.{func.attr}()` on a string that is not a literal: format fields look up "
                               "attributes by name", hint="use an f-string")]
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text.value) if f]
    except ValueError:
        return []
    out = []
    for field in fields:
        for attr in field.replace("[", ".").split(".")[1:]:
            attr = attr.rstrip("]")
            if _attr_refusal(attr, False) is not None:
                out.append(_finding(node, f"format field `{{{field}}}` reaches `.{attr}`"))
    return out


def _class(node: ast.ClassDef, scopes: Scopes) -> list[Finding]:
    out = []
    module_class = scopes.is_module_class(node.name)
    for item in node.body:
        if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        name = item.name
        if name.startswith("__") and name.endswith("__") and name not in DEFINABLE_DUNDERS:
            out.append(_finding(item, f"class {node.name} defines `{name}`: it runs behind the harness's back"))
        elif module_class and name in NN_MODULE_NAMES and name not in NN_MODULE_OVERRIDABLE:
            out.append(_finding(item, f"class {node.name} redefines nn.Module's `{name}`, which the harness "
                                      "relies on"))
    return out
