"""Launch sites (`kernel[grid](...)`), the host values they pass, and where those values come from.

A tile value at a launch is either a literal (`BLOCK_M=64`), a variable bound once to a literal in
the launching function or at module level (`BLOCK_M = 64 ... BLOCK_M=BLOCK_M`), or computed
(`triton.next_power_of_2(n)`). Only the first two can be rewritten with a known old value; a computed
tile is left alone. Bindings are resolved conservatively: a name bound more than once (or by
unpacking, a loop, a parameter) is "computed".
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from xe_forge.proposers.rules.cst_tools import dotted, int_value, read_names, walk
from xe_forge.proposers.rules.kernels import Kernel
from xe_forge.proposers.rules.models import NotApplicable

LAUNCH_OPTIONS = (
    "num_warps", "num_stages", "num_ctas", "maxnreg", "grf_mode", "warp_size", "threads_per_warp",
    "enable_fp_fusion",
)


@dataclass
class Launch:
    """One `kernel[grid](args)` call in host code."""

    kernel: Kernel
    call: cst.Call
    grid: cst.BaseExpression
    scope: cst.FunctionDef | None
    """The host function that launches it; None at module level."""

    def bound(self) -> dict[str, cst.Arg]:
        """Kernel parameter -> the argument passed for it (positional args mapped by index)."""
        bound: dict[str, cst.Arg] = {}
        for index, arg in enumerate(self.call.args):
            if arg.star:
                raise NotApplicable(f"the launch of {self.kernel.name} passes *args/**kwargs; parameters cannot be bound")
            if arg.keyword is not None:
                bound[arg.keyword.value] = arg
            elif index < len(self.kernel.params):
                bound[self.kernel.params[index]] = arg
        return bound

    def options(self) -> dict[str, cst.Arg]:
        return {a.keyword.value: a for a in self.call.args if a.keyword and a.keyword.value in LAUNCH_OPTIONS}


def find_launches(module: cst.Module, kernels: dict[str, Kernel]) -> list[Launch]:
    """Every launch of a kernel of this file, with its enclosing host function."""
    launches: list[Launch] = []

    def visit(node: cst.CSTNode, scope: cst.FunctionDef | None) -> None:
        if isinstance(node, cst.FunctionDef):
            if node.name.value in kernels:
                return
            scope = node
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Subscript):
            name = dotted(node.func.value)
            slices = node.func.slice
            if name in kernels and len(slices) == 1 and isinstance(slices[0].slice, cst.Index):
                launches.append(Launch(kernels[name], node, slices[0].slice.value, scope))
        for child in node.children:
            visit(child, scope)

    visit(module, None)
    return launches


def launches_of(launches: list[Launch], kernel: Kernel) -> list[Launch]:
    found = [launch for launch in launches if launch.kernel is kernel]
    if not found:
        raise NotApplicable(f"{kernel.name} is never launched as {kernel.name}[grid](...) in this file")
    return found


# ----------------------------------------------------------------------------------------------
# Name bindings in a host scope


@dataclass
class Binding:
    """The single `name = value` statement that binds a host name."""

    name: str
    assign: cst.Assign
    value: cst.BaseExpression
    at_module: bool


def _bindings(body: cst.CSTNode, name: str, skip_functions: bool) -> list[cst.CSTNode]:
    """Every statement in `body` that (re)binds `name`; nested defs are skipped when asked."""
    found: list[cst.CSTNode] = []

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not body and node.name.value == name:
            found.append(node)  # `def grid(meta): ...` binds the name too
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname else alias.name
                if isinstance(bound, cst.Name) and bound.value == name:
                    found.append(node)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and node is not body and skip_functions:
            return
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.WithItem)):
            targets: list[cst.CSTNode]
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, cst.WithItem):
                targets = [node.asname.name] if node.asname else []
            else:
                targets = [node.target]
            if any(isinstance(n, cst.Name) and n.value == name for t in targets for n in walk(t)):
                found.append(node)
        for child in node.children:
            visit(child)

    visit(body)
    return found


def resolve(module: cst.Module, scope: cst.FunctionDef | None, name: str) -> Binding | None:
    """The single plain assignment binding `name` where the launch sees it, or None if the name is a
    parameter, bound several times, bound by unpacking, or not bound in this file."""
    if scope is not None:
        if name in {p.name.value for p in scope.params.params} | {
            p.name.value for p in scope.params.kwonly_params
        }:
            return None
        local = _bindings(scope.body, name, skip_functions=True)
        if local:
            return _single(local, name, at_module=False)
    top = [s for s in module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    found = [b for s in top for b in _bindings(s, name, skip_functions=True)]
    return _single(found, name, at_module=True) if found else None


def _single(found: list[cst.CSTNode], name: str, at_module: bool) -> Binding | None:
    if len(found) != 1 or not isinstance(found[0], cst.Assign):
        return None
    assign = found[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    return Binding(name, assign, assign.value, at_module)


def uses_of(scope: cst.CSTNode, name: str) -> list[cst.Name]:
    """Name nodes reading `name` in `scope` (assignment targets and attribute names excluded)."""
    targets = {
        id(n)
        for node in walk(scope)
        if isinstance(node, cst.Assign)
        for t in node.targets
        for n in walk(t.target)
    }
    attrs = {id(node.attr) for node in walk(scope) if isinstance(node, cst.Attribute)}
    keywords = {id(node.keyword) for node in walk(scope) if isinstance(node, cst.Arg) and node.keyword}
    skip = targets | attrs | keywords
    return [n for n in walk(scope) if isinstance(n, cst.Name) and n.value == name and id(n) not in skip]


# ----------------------------------------------------------------------------------------------
# Tile values at a launch


@dataclass
class TileValue:
    """Where the value of one constexpr tile passed at a launch comes from."""

    param: str
    arg: cst.Arg
    value: int | None
    literal: cst.Integer | None
    """The node that holds the literal: in the argument itself, or in the variable's assignment."""
    binding: Binding | None
    """Set when the argument is a variable bound once to a literal."""

    @property
    def computed(self) -> bool:
        return self.literal is None

    def describe(self) -> str:
        if self.binding is not None:
            return f"{self.param}={self.binding.name} (= {self.value})"
        return f"{self.param}={self.value}" if self.literal is not None else f"{self.param} (computed)"


def tile_value(module: cst.Module, launch: Launch, param: str) -> TileValue | None:
    """How `param` is given at `launch`, or None when the launch does not pass it."""
    arg = launch.bound().get(param)
    if arg is None:
        return None
    if int_value(arg.value) is not None:
        return TileValue(param, arg, int_value(arg.value), arg.value, None)  # type: ignore[arg-type]
    if isinstance(arg.value, cst.Name):
        binding = resolve(module, launch.scope, arg.value.value)
        if binding is not None and int_value(binding.value) is not None:
            return TileValue(param, arg, int_value(binding.value), binding.value, binding)  # type: ignore[arg-type]
    return TileValue(param, arg, None, None, None)


def grid_closure(module: cst.Module, launch: Launch, start: cst.BaseExpression) -> list[Binding]:
    """Bindings of the host names the grid expression reads, followed transitively (a grid
    `(num_tiles,)` with `num_tiles = triton.cdiv(M, 64) * ...` depends on that assignment)."""
    seen: dict[str, Binding] = {}
    pending = list(read_names(start))
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        binding = resolve(module, launch.scope, name)
        if binding is None or isinstance(binding.value, cst.Lambda) and name != dotted(start):
            continue
        seen[name] = binding
        pending.extend(read_names(binding.value))
    return list(seen.values())
