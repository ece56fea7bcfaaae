"""Static checks on candidate source (AST only: the parent never imports candidate code).

Whole module: a Model class that subclasses nn.Module, at least one Triton kernel (decorated, or
`kernel = triton.jit(fn)`) launched somewhere in the file (from forward, a helper, or a launcher
object: the run-time launch count is the authority), no escape routes anywhere (escapes.py), jit
bodies that stay inside Triton, no try/except fallback in any function. Torch work is looked for in
every function that can run at forward time (all but `__init__`, get_inputs/get_init_inputs and jit
bodies): compute in torch is refused unless allowed, while data movement (views, cat, stack,
copies, casts, allocation) is not compute. The run-time dispatch audit sees what this misses.
"""

from __future__ import annotations

import ast
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from xe_forge.verify.backward_only import backward_only, enclosing_chains, inside
from xe_forge.verify.escapes import (
    bind_module_names,
    dotted,
    escape_findings,
    import_aliases,
    jit_findings,
    launch_keyword_findings,
)
from xe_forge.verify.host_subset import subset_findings
from xe_forge.verify.jit_syntax import syntax_findings
from xe_forge.verify.models import Finding
from xe_forge.verify.receivers import python_receiver
from xe_forge.verify.torch_names import (  # noqa: F401  (the tables are read from here too)
    ALLOWED_METHODS,
    ALLOWED_NUMPY,
    ALLOWED_TORCH,
    COMPUTE_METHODS,
    FUNCTIONAL_MOVEMENT,
    TORCH_COMPUTE_NAMESPACES,
    call_refusal,
    reference_sites,
    referenced_op,
)

SETUP_FUNCTIONS = {"__init__", "get_inputs", "get_init_inputs"}
JIT_DECORATORS = ("triton.jit", "triton.autotune", "triton.heuristics")


@dataclass
class StaticResult:
    findings: list[Finding] = field(default_factory=list)
    torch_ops: set[str] = field(default_factory=set)  # torch work found at forward time, allowed or not
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
    allow = [a for a in (allow or ()) if a]
    result = StaticResult()
    why = _encoding_refusal(source)
    if why is not None:
        result.findings.append(Finding(check="encoding", line=1, message=why))
        return result
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        result.findings.append(Finding(check="syntax", message=f"syntax error: {err.msg}", line=err.lineno))
        return result
    aliases = import_aliases(tree)
    bodies = jit_bodies(tree, aliases)
    result.kernels = set(bodies)
    allowed = _normalise_allowance(allow)
    model = _model_class(tree)
    if model is None:
        result.findings.append(Finding(check="structure", message="no `class Model(nn.Module)`/`ModelNew` defined"))
        return result
    submodules = _submodules(model, aliases)
    jit_ids = {id(b) for b in bodies.values() if b is not None}
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    backward = backward_only(tree, aliases)  # the training path's own code (backward_only.py)
    chains = enclosing_chains(tree)
    for fn in _forward_time_functions(tree, jit_ids):
        if id(fn) not in backward and not inside(fn, backward, chains):
            _scan_function(fn, result, aliases, submodules, allowed, lambda recv: python_receiver(recv, tree, classes))
    jit_nodes = {id(n) for b in bodies.values() if b is not None for n in ast.walk(b)}
    # `_q = torch.is_autocast_enabled`: a torch function held as a value is refused as its call is
    refs = reference_sites(tree, aliases, lambda n: id(n) in jit_nodes or inside(n, backward, chains))
    result.launches = _launch_sites(tree)
    if record_only:
        for node, op, what in refs:
            _flag(result, allowed, op, node, what)
        return result
    if not result.kernels:
        result.findings.append(Finding(check="no-kernel", message="the file defines no @triton.jit kernel",
                                       hint="the work must happen in a Triton kernel launched from forward"))
    elif not result.launches:
        held = _kernel_held(tree, result.kernels)
        result.findings.append(Finding(
            check="no-launch", line=getattr(held, "lineno", None),
            message=(f"`{ast.unparse(held)}` is handed on, not called: a kernel is launched only as "
                     "`kernel[grid](...)`, where the verifier counts and audits it" if held is not None else
                     "nothing in the file launches a @triton.jit kernel: a kernel that is defined but never "
                     "launched does nothing"),
            hint="launch the kernel from forward: kernel[grid](...)"))
    _check_model_bases(model, result)
    _check_rebinding(tree, model, result)
    _check_fallbacks(tree, jit_ids, result)
    subset = subset_findings(tree, source, jit_ids, aliases, frozenset(a.strip() for a in allow), backward)
    aliases = bind_module_names(tree, dict(aliases))
    result.findings += escape_findings(tree, aliases, allow)
    flagged = {f.line for f in result.findings}
    result.findings += [f for f in subset if f.line not in flagged or f.check != "host-subset"]
    for node, op, what in refs:  # after the subset's findings: a line it names keeps its own reason
        _flag(result, allowed, op, node, what)
    host = _host_names(tree, set(bodies))
    for body in bodies.values():
        if body is not None:
            result.findings += jit_findings(body, set(bodies), host, aliases) + syntax_findings(body)
    result.findings += launch_keyword_findings(tree, host)
    return result


def _encoding_refusal(source: str) -> str | None:
    """The text checked must be the program Python imports: the file is written and read as UTF-8, and
    Python honours a PEP 263 coding cookie on import (under `# coding: utf-7`, `#+AAo-` is a newline that
    starts a line this check would read as a comment). So any cookie other than UTF-8 is refused."""
    lines = iter(source.encode("utf-8", "surrogatepass").splitlines(keepends=True)[:2])
    try:
        encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    except SyntaxError as err:
        return f"the file declares an encoding Python cannot use ({err}): kernel files are UTF-8"
    if encoding not in ("utf-8", "utf-8-sig"):
        return (f"the file declares `coding: {encoding}`: kernel files are UTF-8 (the checks read the text as "
                "UTF-8, so another encoding would import a different program)")
    return None


def jit_bodies(tree: ast.Module, aliases: dict[str, str]) -> dict[str, ast.FunctionDef | None]:
    """Kernel name -> its body: `@triton.jit def k` and `k = triton.jit(fn)` / `triton.autotune(...)(fn)`."""
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    out: dict[str, ast.FunctionDef | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if (dotted(target, aliases) or "").endswith(JIT_DECORATORS):
                    out[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            wrapped = _jit_wrapped(node.value, aliases)
            if wrapped is not None:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        out[t.id] = defs.get(wrapped)
                        if wrapped in defs:
                            out.setdefault(wrapped, defs[wrapped])
    return out


def _jit_wrapped(call: ast.Call, aliases: dict[str, str]) -> str | None:
    """The function name inside `triton.jit(fn)`, `triton.jit(**opts)(fn)`, `triton.autotune(...)(triton.jit(fn))`."""
    name = dotted(call.func.func if isinstance(call.func, ast.Call) else call.func, aliases) or ""
    if not name.endswith(JIT_DECORATORS):
        return None
    for arg in call.args:
        if isinstance(arg, ast.Name):
            return arg.id
        if isinstance(arg, ast.Call):
            inner = _jit_wrapped(arg, aliases)
            if inner is not None:
                return inner
    return None


def _kernel_held(tree: ast.Module, kernels: set[str]) -> ast.Subscript | None:
    """A `kernel[grid]` that is not called where it stands (handed to `functools.partial`, stored): the
    one launch form the file uses instead of `kernel[grid](...)` (red team 6, h20, read "no launch")."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return next((n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and id(n) not in called
                 and isinstance(n.value, ast.Name) and n.value.id in kernels), None)


def _launch_sites(tree: ast.Module) -> set[str]:
    """Every `X[grid](...)` in the file (X a kernel, or a launcher's attribute holding one)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            out.add(ast.unparse(node.func.value))
    return out


def _host_names(tree: ast.Module, jit_names: set[str]) -> set[str]:
    """Module-level functions and objects that are not jit kernels: host code a kernel may not call."""
    out = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name not in jit_names}
    functions = set(out)
    for node in tree.body:
        if isinstance(node, ast.Assign) and not _constant_like(node.value, functions):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name) and t.id not in jit_names}
    return out


def _constant_like(value: ast.AST, functions: set[str]) -> bool:
    """A value a launch may pass as a constexpr; `functions` are the module's host functions and classes."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Tuple | ast.List):
        return all(_constant_like(e, functions) for e in value.elts)
    if isinstance(value, ast.Dict):  # a config table, `**CONFIG` at the launch: {"BLOCK_M": 64, ...}
        return all(k is not None and _constant_like(k, functions) for k in value.keys) and \
            all(_constant_like(v, functions) for v in value.values)
    if isinstance(value, ast.Name):
        return value.id not in functions  # a dtype or another constant, not a host function
    if isinstance(value, ast.Attribute):
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "constexpr":
        return True
    return isinstance(value, ast.UnaryOp | ast.BinOp)


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


def _model_class(tree: ast.Module) -> ast.ClassDef | None:
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    return classes.get("ModelNew") or classes.get("Model")


def _submodules(model: ast.ClassDef, aliases: dict[str, str]) -> set[str]:
    """Attributes assigned a torch.nn module in the model (a class of the file itself is not torch)."""
    names = set()
    for node in ast.walk(model):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            callee = dotted(node.value.func, aliases) or ""
            if callee.startswith("torch.nn.") and callee.split(".")[-1][:1].isupper() and not callee.endswith(
                    ("Parameter", "ParameterList", "ParameterDict")):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        names.add(t.attr)
    return names


def _forward_time_functions(tree: ast.Module, jit_ids: set[int]) -> list[ast.FunctionDef]:
    """Every function or method that can run at forward time: all but setup functions and jit bodies."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and id(node) not in jit_ids:
            if getattr(node, "name", "") in SETUP_FUNCTIONS:
                continue
            out.append(node)
    return out


def _flag(result: StaticResult, allowed: set[str], op: str, node: ast.AST, what: str) -> None:
    result.torch_ops.add(op)
    if not _is_allowed(op, allowed):
        result.findings.append(Finding(check="torch-compute", line=getattr(node, "lineno", None),
                                       message=f"{what} `{op}` does work in torch instead of a Triton kernel",
                                       hint="compute it inside a @triton.jit kernel"))


def _scan_function(fn: ast.AST, result: StaticResult, aliases: dict[str, str], submodules: set[str],
                   allowed: set[str], python: Callable[[ast.AST], bool]) -> None:
    def flag(op: str, node: ast.AST, what: str) -> None:
        _flag(result, allowed, op, node, what)

    nested = {id(n) for n in ast.walk(fn) if n is not fn and isinstance(n, ast.FunctionDef | ast.Lambda)}
    for node in _own_nodes(fn, nested):  # references to torch functions: `reference_sites`, file-wide
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            flag("operator:@", node, "the @ operator")
        elif isinstance(node, ast.Call):
            _scan_call(node, aliases, submodules, flag, python)


def _own_nodes(fn: ast.AST, nested: set[int]) -> list[ast.AST]:
    """The nodes of a function without those of functions nested in it (scanned on their own)."""
    out, stack = [], [fn]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if id(child) in nested:
                continue
            out.append(child)
            stack.append(child)
    return out


def _scan_call(node: ast.Call, aliases: dict[str, str], submodules: set[str], flag,
               python: Callable[[ast.AST], bool]) -> None:
    func = node.func
    if isinstance(func, ast.Subscript):
        return  # a launch
    name = dotted(func, aliases)
    if name in ("getattr", "builtins.getattr") and len(node.args) > 1:
        target = dotted(node.args[0], aliases) or ""
        attr = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
        # getattr(torch, "float16") names a dtype; a computed name may be anything (a literal one that
        # names a torch function is a reference: `reference_sites`)
        if target.split(".")[0] in ("torch", "numpy", "operator") and not isinstance(attr, str):
            flag(f"getattr({ast.unparse(node.args[0])}, {ast.unparse(node.args[1])})", node, "dynamic lookup")
    elif name and call_refusal(name) is not None:
        op, what = call_refusal(name)
        flag(op, node, what)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        if func.attr in submodules:
            flag(f"self.{func.attr}", node, "calling submodule")
    elif isinstance(func, ast.Attribute):
        # a tensor method by its receiver: a Python set's `add` is not torch's
        if func.attr in COMPUTE_METHODS and not (name and name.split(".")[0] in ("triton", "math")) \
                and not python(func.value):
            flag(f"method:{func.attr}", node, "tensor method")


def _check_model_bases(model: ast.ClassDef, result: StaticResult) -> None:
    for base in model.bases:
        text = ast.unparse(base)
        if text not in ("nn.Module", "torch.nn.Module", "Module"):
            result.findings.append(Finding(check="subclass", line=model.lineno,
                                           message=f"{model.name} subclasses `{text}`, not nn.Module: inheriting "
                                                   "from the reference would run its code"))


def _check_rebinding(tree: ast.Module, model: ast.ClassDef, result: StaticResult) -> None:
    """The entry name is bound once, by its class statement: the class checked is the class run (an
    assignment, def, import, loop or second class under that name anywhere would run something else)."""
    name = model.name
    for node in ast.walk(tree):
        if node is model:
            continue
        binds = (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store | ast.Del)) \
            or (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name) \
            or (isinstance(node, ast.Import | ast.ImportFrom)
                and any((a.asname or a.name.split(".")[0]) == name for a in node.names)) \
            or (isinstance(node, ast.Global | ast.Nonlocal) and name in node.names)
        if binds:
            result.findings.append(Finding(check="structure", line=getattr(node, "lineno", None),
                                           message=f"`{name}` is bound again here: the class the checks read must "
                                                   "be the class that runs"))
            return


def _check_fallbacks(tree: ast.Module, jit_ids: set[int], result: StaticResult) -> None:
    """try/except in any function that can run at forward time: a fallback path can hide a failing kernel."""
    for fn in _forward_time_functions(tree, jit_ids):
        for node in ast.walk(fn):
            if isinstance(node, ast.Try):
                result.findings.append(Finding(check="try-except", line=node.lineno,
                                               message="try/except at forward time: a fallback path can hide a "
                                                       "failing kernel"))
                return


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
