"""The constructors of a kernel and its reference, read from the source (never imported), checked against
the arguments both are built with, so a mismatch is one message naming both signatures, from every command.

The verifier builds the reference's `Model` and the kernel's `Model` with the same arguments: the spec's
`inits:` when there is a spec, else what the reference's `get_init_inputs()` returns (the kernel file's own
`get_init_inputs()` is not used). A constructor that cannot take them fails every check; said early and
plainly, it is bad input (exit 2), not a kernel that failed verification.

Only what the source says for certain is judged: a class whose constructor comes from a base this file does
not define, a decorated class, a `get_init_inputs()` that does not return a literal list: all unknown, and
left to the run (where `constructor_error` reads the same failure from a verdict).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from xe_forge.errors import InputError
from xe_forge.problem.source import MODEL_CLASSES, SourceFile

if TYPE_CHECKING:
    from xe_forge.problem.spec import Spec


class _Problem(Protocol):
    """What the constructor check reads of a problem (problem/kernel.py's Problem)."""

    kernel: SourceFile
    reference: SourceFile
    reference_is_self: bool
    spec: Spec | None


class _Verdict(Protocol):
    """What it reads of a verdict (verify/models.py's Verdict): this module sits below the verifier."""

    passed: bool
    findings: list[Any]

_MODULE_BASES = {"Module", "nn.Module", "torch.nn.Module"}
_NO_DEFAULT = inspect.Parameter.empty


class Constructor(BaseModel):
    """A Model class's __init__ as written: `text` is how messages show it ('Model(hidden, eps=1e-05)')."""

    path: str
    text: str
    params: list[tuple[str, str, bool]]  # (name, kind, has a default), self left out

    @classmethod
    def of_class(cls, model: type, path: str) -> Constructor | None:
        """The constructor of an imported class (the probe's process), None where inspect cannot read it."""
        try:
            sig = inspect.signature(model)
        except (TypeError, ValueError):
            return None
        params = [(p.name, p.kind.name, p.default is not inspect.Parameter.empty) for p in sig.parameters.values()]
        return cls(path=str(path), text=f"{model.__name__}{sig}", params=params)

    def signature(self) -> inspect.Signature:
        return inspect.Signature([inspect.Parameter(name, getattr(inspect.Parameter, kind),
                                                    default=None if has_default else _NO_DEFAULT)
                                  for name, kind, has_default in self.params])

    def refuses(self, count: int) -> str | None:
        """Why `count` positional arguments do not bind, or None when they do."""
        try:
            self.signature().bind(*range(count))
        except TypeError as err:
            return str(err)
        return None

    @property
    def names(self) -> list[str]:
        """The positional parameter names, in order (what `spec init` names the inits after)."""
        return [n for n, kind, _ in self.params if kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _init_of(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], seen: set[str]) -> ast.arguments | None | bool:
    """The arguments of the __init__ the class uses: its own, an in-file base's, or nn.Module's (True: takes
    nothing); None when the source cannot tell."""
    if cls.decorator_list or cls.name in seen:
        return None
    seen.add(cls.name)
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            return None if node.decorator_list else node.args
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__init__" for t in node.targets):
            return None
    bases = [ast.unparse(b) for b in cls.bases]
    if len(bases) == 1 and bases[0] in classes:
        return _init_of(classes[bases[0]], classes, seen)
    if bases and all(b in _MODULE_BASES for b in bases):
        return True
    return None


def constructor(source: SourceFile) -> Constructor | None:
    """The file's Model (or ModelNew) constructor, or None when the source does not say for certain."""
    try:
        tree = source.tree
    except SyntaxError:
        return None
    classes = _classes(tree)
    cls = next((classes[c] for c in MODEL_CLASSES if c in classes), None)
    args = _init_of(cls, classes, set()) if cls is not None else None
    if args is None:
        return None
    if args is True:
        return Constructor(path=str(source.path), text=f"{cls.name}()", params=[])
    params: list[tuple[str, str, bool]] = []
    positional = [*args.posonlyargs, *args.args][1:]  # self
    first_default = len(positional) - len(args.defaults)
    shown = []
    for i, a in enumerate(positional):
        kind = "POSITIONAL_ONLY" if a in args.posonlyargs else "POSITIONAL_OR_KEYWORD"
        default = args.defaults[i - first_default] if i >= first_default else None
        params.append((a.arg, kind, default is not None))
        shown.append(a.arg + (f"={ast.unparse(default)}" if default is not None else ""))
    if args.vararg:
        params.append((args.vararg.arg, "VAR_POSITIONAL", False))
        shown.append(f"*{args.vararg.arg}")
    for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append((a.arg, "KEYWORD_ONLY", default is not None))
        shown.append(a.arg + (f"={ast.unparse(default)}" if default is not None else ""))
    if args.kwarg:
        params.append((args.kwarg.arg, "VAR_KEYWORD", False))
        shown.append(f"**{args.kwarg.arg}")
    return Constructor(path=str(source.path), text=f"{cls.name}({', '.join(shown)})", params=params)


def literal_init_inputs(source: SourceFile) -> list[str] | None:
    """What `get_init_inputs()` returns, as source text per item, when it is one literal list or tuple."""
    try:
        tree = source.tree
    except SyntaxError:
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_init_inputs"), None)
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)] if fn else []
    if len(returns) != 1 or not isinstance(returns[0].value, ast.List | ast.Tuple):
        return None
    items = returns[0].value.elts
    return None if any(isinstance(e, ast.Starred) for e in items) else [ast.unparse(e) for e in items]


class InitArgs(BaseModel):
    """The arguments both models are built with, and where they come from (for the message)."""

    count: int
    where: str  # "the reference's get_init_inputs() (ref.py: [HIDDEN])"
    fix: str

    @property
    def counted(self) -> str:
        return f"{self.count} argument{'' if self.count == 1 else 's'}"


FIX_KERNEL = ("give the kernel's Model the reference's constructor (the kernel file's own get_init_inputs() is not "
              "used), or pass the reference it was written for (--reference)")


def init_args_source(reference: SourceFile, spec: Spec | None) -> InitArgs | None:
    """Where the verifier takes the constructor arguments from: the spec's `inits:`, else the reference's
    get_init_inputs() (None when its return value is not a literal list)."""
    if spec is not None:
        names = [name for name, _ in spec.inits]
        where = Path(spec.path).name if spec.path else "the spec"
        return InitArgs(count=len(names), where=f"the spec's `inits:` ({where}: {', '.join(names) or 'none'})",
                        fix="the spec's `inits:` must be what the reference's constructor takes "
                            "(`xe-forge spec init --force` writes them from the files)")
    return file_init_args(reference, "reference")


def file_init_args(source: SourceFile, role: str) -> InitArgs | None:
    items = literal_init_inputs(source)
    if items is None:
        return None
    return InitArgs(count=len(items), where=f"the {role}'s get_init_inputs() ({Path(source.path).name}: "
                                            f"[{', '.join(items)}])", fix=FIX_KERNEL)


def mismatch_message(kernel: Constructor | None, reference: Constructor | None, args: InitArgs, role: str,
                     reason: str) -> str:
    def named(ctor: Constructor | None, who: str) -> str:
        return f"the {who}'s {ctor.text} ({Path(ctor.path).name})" if ctor else f"the {who}'s Model"

    both = named(kernel, "kernel") if reference is kernel else f"{named(kernel, 'kernel')} and {named(reference, 'reference')}"
    verb = "is" if reference is kernel else "are both"
    them = "it" if args.count == 1 else "them"
    return (f"constructor mismatch: {both} {verb} built with the {args.counted} of {args.where}; "
            f"the {role}'s Model cannot take {them} ({reason})")


def check_constructors(kernel: SourceFile, reference: SourceFile, *, reference_is_self: bool, spec: Spec | None,
                       args: InitArgs | None = None) -> None:
    """Raise one InputError when the arguments (by default: where the verifier takes them from) cannot build
    one of the two models, as far as the source says."""
    args = args or init_args_source(reference, spec)
    if args is None:
        return
    mine = constructor(kernel)
    theirs = mine if reference_is_self else constructor(reference)
    for role, ctor in [("kernel", mine)] + ([] if reference_is_self else [("reference", theirs)]):
        why = ctor.refuses(args.count) if ctor is not None else None
        if why is not None:
            raise InputError(mismatch_message(mine, theirs, args, role, why), hint=args.fix)


def constructor_error(problem: _Problem, failure: str) -> InputError | None:
    """The same message for a mismatch only a run could see: `failure` is a verdict's text where building a
    model raised a TypeError about its arguments (missing, unexpected or too many)."""
    if "TypeError" not in failure or "__init__()" not in failure or "argument" not in failure:
        return None
    role = "reference" if "reference Model cannot be built" in failure else "kernel"
    detail = failure[failure.index("TypeError"):].split(" — try:")[0].split("; [")[0].strip()
    known = init_args_source(problem.reference, problem.spec)
    args = known or InitArgs(count=0, where="the reference's get_init_inputs()", fix=FIX_KERNEL)
    mine = constructor(problem.kernel)
    theirs = mine if problem.reference_is_self else constructor(problem.reference)
    message = mismatch_message(mine, theirs, args, role, detail)
    if known is None:
        message = message.replace("the 0 arguments of ", "the arguments of ")
    return InputError(message, hint=args.fix)


def verdict_constructor_error(problem: _Problem, verdict: _Verdict) -> InputError | None:
    """A verdict that failed where a model is built, about its arguments, as the one constructor message."""
    if verdict.passed:
        return None
    return constructor_error(problem, "; ".join(f.render() for f in verdict.findings))
