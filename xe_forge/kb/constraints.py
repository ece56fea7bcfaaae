"""Applying the machine-checkable constraints to a candidate's source, before it runs.

A launch option the toolchain rejects (an old grf_mode name, 256-register mode with 64 warps, an
option the installed version removed, a call that was removed) would otherwise cost a compile and a
child process to discover; here it is found from the AST in milliseconds, and the reason names the
knowledge-base entry that forbids it. Options are judged by the one option table (kb/options.py);
parameters of the module's @triton.jit functions are never taken for launch options.

Option sites are read where options are literal: `kernel[grid](..., num_warps=8, grf_mode="256")` and
`triton.Config({"BLOCK_M": 128, "grf_mode": "256"}, num_warps=32)`. Values computed at run time are not
guessed at. Options inside an `if` that selects one vendor's device (`if x.device.type == "xpu":`) are
checked only for that vendor's targets, so portable kernels are not rejected for their other branch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from xe_forge.kb.loader import KnowledgeBase
from xe_forge.kb.options import OptionTable
from xe_forge.kb.schema import Entry, ForbidCallCheck, Violation
from xe_forge.toolchain import Toolchain

_DEFAULT_ALIASES = {"tl": "triton.language"}


@dataclass
class OptionSite:
    """Literal options given together at one launch or one triton.Config, and where."""

    line: int
    options: dict[str, Any] = field(default_factory=dict)
    guard: str | None = None  # 'xpu' / 'cuda' when inside a branch taken only on that device


@dataclass
class CallSite:
    name: str  # canonical dotted name, aliases resolved (tl.x -> triton.language.x)
    line: int
    keywords: set[str] = field(default_factory=set)


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def canonical(name: str, aliases: dict[str, str]) -> str:
    """Resolve the first component of a dotted name through import aliases."""
    head, _, rest = name.partition(".")
    base = aliases.get(head, head)
    return f"{base}.{rest}" if rest else base


def _aliases(tree: ast.AST) -> dict[str, str]:
    aliases = dict(_DEFAULT_ALIASES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _keywords(call: ast.Call) -> dict[str, Any]:
    found = {}
    for kw in call.keywords:
        if kw.arg is not None:
            ok, value = _literal(kw.value)
            if ok:
                found[kw.arg] = value
    return found


def _device_guard(test: ast.expr) -> str | None:
    """'xpu' or 'cuda' when an `if` test asks for exactly one of them (e.g. x.device.type == "xpu")."""
    text = ast.unparse(test).lower()
    found = {name for name in ("xpu", "cuda") if name in text}
    return found.pop() if len(found) == 1 else None


class _Scanner(ast.NodeVisitor):
    """Collects option sites and calls, remembering the device an enclosing `if` selects.

    Portable kernels branch on the device (`if x.device.type == "xpu": ... grf_mode="256"`); options
    inside such a branch are checked only for that vendor's targets.
    """

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.guard: str | None = None
        self.options: list[OptionSite] = []
        self.calls: list[CallSite] = []
        self.parameters: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        """Parameters of @triton.jit functions are launch keywords of their own, never options."""
        for decorator in node.decorator_list:
            name = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
            if name.split(".")[-1] == "jit":
                args = node.args
                self.parameters.update(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        outer = self.guard
        self.guard = _device_guard(node.test) or outer
        for child in node.body:
            self.visit(child)
        self.guard = outer
        for child in node.orelse:
            self.visit(child)

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if isinstance(node.func, ast.Subscript):  # kernel[grid](...)
            self.options.append(OptionSite(node.lineno, _keywords(node), self.guard))
            return
        name = _dotted(node.func)
        if name is None:
            return
        full = canonical(name, self.aliases)
        self.calls.append(CallSite(full, node.lineno, {kw.arg for kw in node.keywords if kw.arg}))
        if full.split(".")[-1] == "Config" and full.startswith(("triton", "Config")):
            site = OptionSite(node.lineno, {}, self.guard)
            if node.args and isinstance(node.args[0], ast.Dict):
                for key, value in zip(node.args[0].keys, node.args[0].values, strict=True):
                    ok_key, key_name = _literal(key) if key is not None else (False, None)
                    ok_val, val = _literal(value)
                    if ok_key and ok_val and isinstance(key_name, str):
                        site.options[key_name] = val
            site.options.update(_keywords(node))
            self.options.append(site)


@dataclass
class Scan:
    """What the static pass reads from a module."""

    options: list[OptionSite]
    calls: list[CallSite]
    parameters: set[str]  # parameter names of the module's @triton.jit functions


def scan_source(tree: ast.AST) -> Scan:
    """Every literal option site, every call and the kernel parameter names of a module."""
    scanner = _Scanner(_aliases(tree))
    scanner.visit(tree)
    return Scan(scanner.options, scanner.calls, scanner.parameters)


def _guard_excludes(guard: str | None, target: str) -> bool:
    """Whether a site under a device branch cannot run on `target` (xpu code on NVIDIA and back)."""
    if guard == "xpu":
        return target.startswith("nvidia")
    if guard == "cuda":
        return target.startswith("intel")
    return False


def _call_matches(check: ForbidCallCheck, call: CallSite) -> bool:
    """Exact match on the canonical dotted name (`tl.advance` and `triton.language.advance` alike)."""
    names = {canonical(forbidden, _DEFAULT_ALIASES) for forbidden in check.calls}
    return call.name in names and (check.keyword is None or check.keyword in call.keywords)


def call_violations(entry: Entry, calls: list[CallSite]) -> list[Violation]:
    """Calls a forbid_call constraint forbids, one violation per call."""
    check = entry.constraint.check if entry.constraint else None
    if not isinstance(check, ForbidCallCheck):
        return []
    found: list[Violation] = []
    for call in calls:
        if _call_matches(check, call):
            what = f"{call.name}(..., {check.keyword}=...)" if check.keyword else f"{call.name}()"
            found.append(Violation(entry_id=entry.id, line=call.line,
                                   message=f"[{entry.id}] {what} is not allowed: {entry.constraint.rule}"))
    return found


def check_constraints(source: str, *, target: str, toolchain: Toolchain, kb: KnowledgeBase) -> list[Violation]:
    """Every applicable machine-checkable constraint the candidate breaks, in source order.

    A source that does not parse yields one violation with entry id 'python-syntax'.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        return [Violation(entry_id="python-syntax", line=err.lineno or 0,
                          message=f"[python-syntax] the candidate does not parse: {err.msg}")]
    scan = scan_source(tree)
    table = OptionTable(kb.entries)
    violations: list[Violation] = []
    for site in scan.options:
        if _guard_excludes(site.guard, target):
            continue
        for problem in table.problems(site.options, target, toolchain, parameters=scan.parameters):
            violations.append(Violation(entry_id=problem.entry_id or "", line=site.line, message=problem.message))
    for entry in kb.filter(target=target, kind="constraint", toolchain=toolchain):
        violations.extend(call_violations(entry, scan.calls))
    return sorted(violations, key=lambda v: (v.line, v.entry_id, v.message))
