"""What the host subset needs to know of a file's scopes: which names are a method's own receiver
(`self`, `cls`, an autograd.Function's `ctx`), which classes are nn.Modules, what a function binds.

Read from the AST only, as the rest of the static check (host_subset.py uses it)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from xe_forge.verify.subset_rules import resolve

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# the static methods of a torch.autograd.Function whose first parameter is autograd's context
CTX_METHODS = frozenset({"forward", "backward", "setup_context", "jvp", "vjp"})


class Scopes:
    """Receivers (`self`/`cls` of the file's own methods) per function, and the file's classes."""

    def __init__(self, tree: ast.Module, aliases: dict[str, str] | None = None) -> None:
        self.receivers: dict[int, set[str]] = {}
        self.tree = tree
        self.aliases = aliases or {}
        self.classes: dict[str, ast.ClassDef] = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        self.enclosing: dict[int, ast.AST | None] = {}
        self.contexts: dict[int, str] = {}  # the `ctx` of an autograd.Function's static forward/backward
        self._walk(tree, None, set(), None)

    def _walk(self, node: ast.AST, cls: ast.ClassDef | None, recv: set[str], fn: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            self.enclosing[id(child)] = fn
            if isinstance(child, FUNCTIONS):
                own = set(recv) - bound_in(child)
                if isinstance(child, ast.FunctionDef) and node is cls and cls is not None:
                    first = first_param(child)
                    if first and not is_static(child) and first not in stored_in(child):
                        own.add(first)
                    elif first and is_static(child) and child.name in CTX_METHODS and self.is_function_class(cls) \
                            and first not in stored_in(child):
                        self.contexts[id(child)] = first
                self.receivers[id(child)] = own
                self._walk(child, None, own, child)
            elif isinstance(child, ast.ClassDef):
                self._walk(child, child, set(), fn)
            else:
                self._walk(child, cls, recv, fn)

    def receiver(self, name: str, node: ast.AST) -> bool:
        fn = self.enclosing.get(id(node))
        return fn is not None and name in self.receivers.get(id(fn), set())

    def context(self, name: str, node: ast.AST) -> bool:
        """Whether `name` is the `ctx` autograd hands the enclosing forward/backward (its public
        attributes are that call's to set: `ctx.eps = eps`, `ctx.save_for_backward(x)`)."""
        fn = self.enclosing.get(id(node))
        return fn is not None and self.contexts.get(id(fn)) == name

    def is_function_class(self, cls: ast.ClassDef) -> bool:
        import torch

        return any(isinstance(b, type) and issubclass(b, torch.autograd.Function)
                   for b in (resolve_base(base, self.aliases) for base in cls.bases))

    def is_module_class(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a class of the file is (through its bases) an nn.Module."""
        cls = self.classes.get(name)
        if cls is None or name in seen:
            return False
        for base in cls.bases:
            text = ast.unparse(base)
            if text.split(".")[-1] == "Module" or text.startswith(("nn.", "torch.nn.")):
                return True
            if is_module_type(resolve_base(base, self.aliases)) or self.is_module_class(text, seen | {name}):
                return True
        return False

    def plain_method(self, cls_name: str, attr: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether `attr` is a plain (instance) method of one of the file's classes or its bases."""
        cls = self.classes.get(cls_name)
        if cls is None or cls_name in seen:
            return False
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == attr:
                return not is_static(item) and not decorated(item, "classmethod")
        return any(self.plain_method(ast.unparse(b), attr, seen | {cls_name}) for b in cls.bases)


def resolve_base(base: ast.AST, aliases: dict[str, str]) -> object:
    """The object a class base spelled through the file's imports is (`Base` for `from torch.nn import
    Module as Base` is nn.Module itself), else None."""
    parts = []
    while isinstance(base, ast.Attribute):
        parts.append(base.attr)
        base = base.value
    if not isinstance(base, ast.Name) or base.id not in aliases:
        return None
    return resolve(".".join([aliases[base.id], *reversed(parts)]))


def is_module_type(obj: object) -> bool:
    import torch

    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


def first_param(fn: ast.FunctionDef) -> str | None:
    params = fn.args.posonlyargs + fn.args.args
    return params[0].arg if params else None


def decorated(fn: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(d, ast.Name) and d.id == name for d in fn.decorator_list)


def is_static(fn: ast.FunctionDef) -> bool:
    return decorated(fn, "staticmethod")


def own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def stored_in(fn: ast.AST) -> set[str]:
    return {n.id for n in own_nodes(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)}


def bound_in(fn: ast.AST) -> set[str]:
    args = fn.args
    params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return params | stored_in(fn)
