"""The constructors and forwards of a kernel and its reference, read from the source (never imported),
checked against the arguments both are given, so a mismatch is one message naming both signatures, from
every command, before any worker starts.

The verifier builds the reference's `Model` and the kernel's `Model` with the same arguments, and calls both
forwards with the same inputs: the spec's `inits:` and `inputs:` when there is a spec, else what the
reference's `get_init_inputs()` and `get_inputs()` return (the kernel file's own are not used). A constructor
or forward that cannot take them fails every check; said early and plainly, it is bad input (exit 2), not a
kernel that failed verification.

Only what the source says for certain is judged: a class whose method comes from a base this file does not
define, a decorated class or method, a `get_init_inputs()` / `get_inputs()` that does not return a literal
list: all unknown, and left to the run (where `verdict_signature_error` reads the same failure from a verdict).
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel

from xe_forge.errors import SignatureMismatch
from xe_forge.problem.source import MODEL_CLASSES, SourceFile

if TYPE_CHECKING:
    from xe_forge.problem.spec import Spec

Kind = Literal["constructor", "forward"]
KINDS: tuple[Kind, ...] = ("constructor", "forward")


class _Problem(Protocol):
    """What the check reads of a problem (problem/kernel.py's Problem)."""

    kernel: SourceFile
    reference: SourceFile
    reference_is_self: bool
    spec: Spec | None
    variant: str | None


class _Verdict(Protocol):
    """What it reads of a verdict (verify/models.py's Verdict): this module sits below the verifier."""

    passed: bool
    findings: list[Any]


class _Words(BaseModel):
    """How messages name one kind of call: the same sentence serves the constructor and the forward."""

    method: str  # the method's name in the source
    shown: str  # how a model's method is named when its signature is unknown ("Model", "forward")
    verb: str  # "built", "called"
    noun: str  # "argument", "input"
    function: str  # the file's function that supplies them without a spec
    spec_key: str  # the spec's key that supplies them with one


WORDS: dict[Kind, _Words] = {
    "constructor": _Words(method="__init__", shown="Model", verb="built", noun="argument",
                          function="get_init_inputs", spec_key="inits"),
    "forward": _Words(method="forward", shown="forward", verb="called", noun="input", function="get_inputs",
                      spec_key="inputs"),
}
MISMATCH_PREFIXES = tuple(f"{kind} mismatch" for kind in KINDS)  # how every such message starts
FIX_KERNEL: dict[Kind, str] = {
    "constructor": "give the kernel's Model the reference's constructor (the kernel file's own get_init_inputs() "
                   "is not used), or pass the reference it was written for (--reference)",
    "forward": "give the kernel's forward the reference's arguments (the kernel file's own get_inputs() is not "
               "used), or pass the reference it was written for (--reference)",
}
_MODULE_BASES = {"Module", "nn.Module", "torch.nn.Module"}
_NO_DEFAULT = inspect.Parameter.empty


class Method(BaseModel):
    """A Model class's __init__ or forward as written: `text` is how messages show it ('Model(hidden,
    eps=1e-05)', 'Model.forward(x, residual)')."""

    path: str
    text: str
    params: list[tuple[str, str, bool]]  # (name, kind, has a default), self left out

    @classmethod
    def of_class(cls, model: type, path: str, kind: Kind = "constructor") -> Method | None:
        """The method of an imported class (the probe's process), None where inspect cannot read it."""
        try:
            sig = inspect.signature(model if kind == "constructor" else functools.partial(model.forward, None))
        except (TypeError, ValueError, AttributeError):
            return None
        params = [(p.name, p.kind.name, p.default is not inspect.Parameter.empty) for p in sig.parameters.values()]
        name = model.__name__ if kind == "constructor" else f"{model.__name__}.forward"
        return cls(path=str(path), text=f"{name}{sig}", params=params)

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


def _args_of(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], seen: set[str], method: str,
             ) -> ast.arguments | None | bool:
    """The arguments of the method the class uses: its own, an in-file base's, or nn.Module's __init__ (True:
    takes nothing); None when the source cannot tell."""
    if cls.decorator_list or cls.name in seen:
        return None
    seen.add(cls.name)
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == method:
            return None if node.decorator_list or isinstance(node, ast.AsyncFunctionDef) else node.args
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(t, ast.Name) and t.id == method for t in targets):
            return None
    bases = [ast.unparse(b) for b in cls.bases]
    if len(bases) == 1 and bases[0] in classes:
        return _args_of(classes[bases[0]], classes, seen, method)
    if method == "__init__" and bases and all(b in _MODULE_BASES for b in bases):
        return True  # nn.Module's forward is no forward at all: unknown, left to the run
    return None


def read_method(source: SourceFile, kind: Kind = "constructor") -> Method | None:
    """The file's Model (or ModelNew) __init__ or forward, or None when the source does not say for certain."""
    try:
        tree = source.tree
    except SyntaxError:
        return None
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    cls = next((classes[c] for c in MODEL_CLASSES if c in classes), None)
    args = _args_of(cls, classes, set(), WORDS[kind].method) if cls is not None else None
    if args is None:
        return None
    name = cls.name if kind == "constructor" else f"{cls.name}.forward"
    if args is True:
        return Method(path=str(source.path), text=f"{name}()", params=[])
    params: list[tuple[str, str, bool]] = []
    positional = [*args.posonlyargs, *args.args][1:]  # self
    first_default = len(positional) - len(args.defaults)
    shown = []
    for i, a in enumerate(positional):
        kind_name = "POSITIONAL_ONLY" if a in args.posonlyargs else "POSITIONAL_OR_KEYWORD"
        default = args.defaults[i - first_default] if i >= first_default else None
        params.append((a.arg, kind_name, default is not None))
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
    return Method(path=str(source.path), text=f"{name}({', '.join(shown)})", params=params)


def literal_returns(source: SourceFile, function: str) -> list[str] | None:
    """What `function()` (get_init_inputs, get_inputs) returns, as source text per item, when it is one literal
    list or tuple."""
    try:
        tree = source.tree
    except SyntaxError:
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)] if fn else []
    if len(returns) != 1 or not isinstance(returns[0].value, ast.List | ast.Tuple):
        return None
    items = returns[0].value.elts
    return None if any(isinstance(e, ast.Starred) for e in items) else [ast.unparse(e) for e in items]


def _listed(items: list[str], limit: int = 120) -> str:
    """Items as the message shows them: all of them, cut short past `limit` characters."""
    text = ", ".join(items)
    return text if len(text) <= limit else text[:limit - 3].rstrip(", ") + "..."


class CallArgs(BaseModel):
    """The arguments both models are built (or both forwards called) with, and where they come from."""

    kind: Kind = "constructor"
    count: int | None  # None: only a run can tell
    where: str  # "the reference's get_init_inputs() (ref.py: [HIDDEN])"
    fix: str

    @property
    def counted(self) -> str:
        noun = WORDS[self.kind].noun
        if self.count is None:
            return f"the {noun}s"
        return f"the {self.count} {noun}{'' if self.count == 1 else 's'}"


def args_source(reference: SourceFile, spec: Spec | None, kind: Kind = "constructor",
                variant: str | None = None) -> CallArgs | None:
    """Where the verifier takes the arguments from: the spec's `inits:` / `inputs:` (the variant's `params:`
    where it has them), else the reference's get_init_inputs() / get_inputs() (None: not a literal list)."""
    if spec is None:
        return file_args(reference, "reference", kind)
    where = Path(spec.path).name if spec.path else "the spec"
    words = WORDS[kind]
    fix = (f"the spec's `{words.spec_key}:` must be what the reference's {kind} takes "
           "(`xe-forge spec init --force` writes them from the files)")
    if kind == "constructor":
        names, key = [name for name, _ in spec.inits], "`inits:`"
    else:
        entry = spec.variant(variant)
        names, key = entry.params or list(spec.inputs), "`inputs:`"
        if entry.params:
            key = f"variant '{spec.variant_name(variant)}' `params:`"
    return CallArgs(kind=kind, count=len(names), where=f"the spec's {key} ({where}: {', '.join(names) or 'none'})",
                    fix=fix)


def file_args(source: SourceFile, role: str, kind: Kind = "constructor") -> CallArgs | None:
    """The arguments a file's own get_init_inputs() / get_inputs() return, when the source says how many."""
    words = WORDS[kind]
    items = literal_returns(source, words.function)
    if items is None:
        return None
    fix = FIX_KERNEL[kind] if role == "reference" else (
        f"`spec init` writes the spec's `{words.spec_key}:` from the kernel file's {words.function}(): make it "
        f"what both {'constructors' if kind == 'constructor' else 'forwards'} take")
    return CallArgs(kind=kind, count=len(items), fix=fix,
                    where=f"the {role}'s {words.function}() ({Path(source.path).name}: [{_listed(items)}])")


def mismatch_message(kernel: Method | None, reference: Method | None, args: CallArgs, role: str,
                     reason: str) -> str:
    """'constructor mismatch: the kernel's Model(a, b) (k.py) and the reference's Model(a) (r.py) are both built
    with the 1 argument of the reference's get_init_inputs() (r.py: [A]); the kernel's Model cannot take it (...)'"""
    words = WORDS[args.kind]

    def named(method: Method | None, who: str) -> str:
        return f"the {who}'s {method.text} ({Path(method.path).name})" if method else f"the {who}'s {words.shown}"

    alone = reference is kernel
    both = named(kernel, "kernel") if alone else f"{named(kernel, 'kernel')} and {named(reference, 'reference')}"
    them = "it" if args.count == 1 else "them"
    return (f"{args.kind} mismatch: {both} {'is' if alone else 'are both'} {words.verb} with {args.counted} of "
            f"{args.where}; the {role}'s {words.shown} cannot take {them} ({reason})")


def check_calls(kernel: SourceFile, reference: SourceFile, kind: Kind, *, reference_is_self: bool,
                args: CallArgs | None) -> None:
    """Raise SignatureMismatch when `args` cannot build (or call) one of the two models, as far as the source
    says."""
    if args is None or args.count is None:
        return
    mine = read_method(kernel, kind)
    theirs = mine if reference_is_self else read_method(reference, kind)
    for role, method in [("kernel", mine)] + ([] if reference_is_self else [("reference", theirs)]):
        why = method.refuses(args.count) if method is not None else None
        if why is not None:
            raise SignatureMismatch(mismatch_message(mine, theirs, args, role, why), hint=args.fix)


def check_signatures(kernel: SourceFile, reference: SourceFile, *, reference_is_self: bool, spec: Spec | None,
                     variant: str | None = None) -> None:
    """Both constructors, then both forwards, against what the verifier will give them (load_problem)."""
    for kind in KINDS:
        check_calls(kernel, reference, kind, reference_is_self=reference_is_self,
                    args=args_source(reference, spec, kind, variant))


def check_classes(kernel: type, reference: type | None, kernel_path: str, reference_path: str | None,
                  counts: dict[Kind, int]) -> None:
    """The same check on imported classes (spec init's probe): the kernel file's get_init_inputs() and
    get_inputs(), which the spec's `inits:` and `inputs:` are written from, must fit both models."""
    for kind, count in counts.items():
        words = WORDS[kind]
        mine = Method.of_class(kernel, kernel_path, kind)
        theirs = mine if reference is None else Method.of_class(reference, reference_path or kernel_path, kind)
        args = CallArgs(kind=kind, count=count, where=f"the kernel's {words.function}() ({Path(kernel_path).name}), "
                        f"which the spec's `{words.spec_key}:` are written from", fix=FIX_KERNEL[kind])
        for role, method in (("kernel", mine), ("reference", theirs)):
            why = method.refuses(count) if method is not None else None
            if why is not None:
                raise SignatureMismatch(mismatch_message(mine, theirs, args, role, why), hint=args.fix)


# a model's own __init__ or forward refusing its arguments (the TypeError names the Model class), not one raised
# inside their bodies by a call they make
_CALL_FAILED = re.compile(r"TypeError: (?:ModelNew|Model)\.(__init__|forward)\(\) "
                          r"(?:missing \d+ required|takes |got an unexpected|got multiple)")
_REFERENCE_FAILED = ("the reference Model cannot be built", "the reference fails on its own inputs")


def signature_error(problem: _Problem, failure: str) -> SignatureMismatch | None:
    """The same message for a mismatch only a run could see: `failure` is one finding of a verdict, where
    building a model or calling its forward raised a TypeError about its arguments."""
    found = _CALL_FAILED.search(failure)
    if found is None:
        return None
    kind: Kind = "constructor" if found.group(1) == "__init__" else "forward"
    role = "reference" if any(r in failure[:found.start()] for r in _REFERENCE_FAILED) else "kernel"
    detail = failure[found.start():].split(" — try:")[0].split("; [")[0].split(" in a call of ")[0].strip()
    args = args_source(problem.reference, problem.spec, kind, problem.variant) or CallArgs(
        kind=kind, count=None, where=f"the reference's {WORDS[kind].function}()", fix=FIX_KERNEL[kind])
    mine = read_method(problem.kernel, kind)
    theirs = mine if problem.reference_is_self else read_method(problem.reference, kind)
    return SignatureMismatch(mismatch_message(mine, theirs, args, role, detail), hint=args.fix)


def verdict_signature_error(problem: _Problem, verdict: _Verdict) -> SignatureMismatch | None:
    """A verdict that failed where a model is built or its forward called, about their arguments, as the one
    mismatch message (check, bench, optimize's baseline and spec init's check raise it)."""
    if verdict.passed:
        return None
    return next((err for f in verdict.findings if (err := signature_error(problem, f.render())) is not None), None)
