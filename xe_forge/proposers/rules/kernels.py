"""Static facts about the @triton.jit kernels of a file, read from the concrete syntax tree.

Transforms ask these questions before they touch anything: which parameters are constexpr tiles,
is the kernel already autotuned, what problem class it is (gemm, gemm-epilogue, reduction,
elementwise), which tiles partition the launch grid (`pid_m * BLOCK_M`) and which stride a loop
(`range(0, K, BLOCK_K)`): only those can change without leaving elements uncovered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from xe_forge.proposers.rules.cst_tools import call_name, dotted, int_value, read_names, walk

DOT_CALLS = {"tl.dot", "triton.language.dot", "tl.dot_scaled"}
REDUCE_METHODS = {"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum"}
CAST_CALLS = {"to", "cast"}
PROGRAM_ID = {"tl.program_id", "triton.language.program_id"}
FREE_META = {"GROUP_SIZE_M"}
"""Meta-parameters any positive value of which is correct (they only reorder the programs)."""


@dataclass
class Kernel:
    """One module-level @triton.jit function and what the transforms need to know about it."""

    node: cst.FunctionDef
    name: str
    params: list[str]
    constexprs: list[str]
    autotune: cst.Decorator | None
    has_heuristics: bool
    problem_class: str
    heuristic_keys: frozenset[str] | None = frozenset()
    """Meta-parameters @triton.heuristics sets; None when its keys are not written literally."""
    grid_tiles: dict[str, set[int]] = field(default_factory=dict)
    """constexpr tile -> program-id axes it multiplies (tiles that partition the grid)."""
    loop_tiles: set[str] = field(default_factory=set)
    """constexpr tiles read in a for-loop's iterable (tiles that stride a loop)."""
    uses_dot: bool = False
    """Whether the kernel calls tl.dot (every dot dimension must then be >= 16)."""
    tile_dims: dict[str, set[str]] = field(default_factory=dict)
    """constexpr tile -> size parameters it blocks (`offs_m < M`, `tl.cdiv(M, BLOCK_M)`)."""

    def tunable(self, tile: str) -> bool:
        """Whether changing this constexpr keeps the kernel covering its whole problem."""
        return tile in self.grid_tiles or tile in self.loop_tiles or tile in FREE_META

    def chosen_by_heuristics(self, name: str) -> bool:
        """Whether @triton.heuristics sets this meta-parameter. Triton's Heuristics.run overwrites
        whatever the launch passes for it, so a value set at the launch would be ignored by the
        kernel while a grid written with that value would not (unknown keys count as all)."""
        return self.has_heuristics and (self.heuristic_keys is None or name in self.heuristic_keys)


def _decorator_name(dec: cst.Decorator) -> str | None:
    target = dec.decorator
    return call_name(target) if isinstance(target, cst.Call) else dotted(target)


def _is_jit(dec: cst.Decorator) -> bool:
    name = _decorator_name(dec) or ""
    return name in ("triton.jit", "jit")


def _heuristic_keys(decorators: list[cst.Decorator], names: list[str]) -> frozenset[str] | None:
    """Keys of every @triton.heuristics({...}) / (values={...}) / (dict(K=...)) decorator; None when
    one of them gives its dict any other way (a variable, a comprehension, `**` entries)."""
    keys: set[str] = set()
    for dec, name in zip(decorators, names, strict=True):
        if not name.endswith("heuristics"):
            continue
        call = dec.decorator
        args = call.args if isinstance(call, cst.Call) else ()
        value = next((a.value for a in args if a.keyword is None or a.keyword.value == "values"), None)
        if isinstance(value, cst.Dict) and all(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in value.elements):
            keys |= {e.key.evaluated_value for e in value.elements}  # type: ignore[union-attr,misc]
        elif isinstance(value, cst.Call) and dotted(value.func) == "dict" and all(a.keyword for a in value.args):
            keys |= {a.keyword.value for a in value.args}  # type: ignore[union-attr]
        else:
            return None
    return frozenset(keys)


def find_kernels(module: cst.Module) -> dict[str, Kernel]:
    """Module-level functions decorated with triton.jit, by name, in source order."""
    kernels: dict[str, Kernel] = {}
    jitted = [s for s in module.body if isinstance(s, cst.FunctionDef) and any(_is_jit(d) for d in s.decorators)]
    reducing = _reducing_functions(jitted)
    for statement in jitted:
        names = [_decorator_name(d) or "" for d in statement.decorators]
        autotune = next((d for d, n in zip(statement.decorators, names, strict=True) if n.endswith("autotune")), None)
        params = [p.name.value for p in statement.params.params]
        constexprs = [
            p.name.value
            for p in statement.params.params
            if p.annotation is not None and (dotted(p.annotation.annotation) or "").endswith("constexpr")
        ]
        kernel = Kernel(
            node=statement,
            name=statement.name.value,
            params=params,
            constexprs=constexprs,
            autotune=autotune,
            has_heuristics=any(n.endswith("heuristics") for n in names),
            heuristic_keys=_heuristic_keys(list(statement.decorators), names),
            problem_class=problem_class(statement, reducing),
        )
        kernel.grid_tiles = _grid_tiles(statement, set(constexprs))
        kernel.loop_tiles = _loop_tiles(statement, set(constexprs))
        kernel.uses_dot = any(call_name(n) in DOT_CALLS for n in walk(statement.body) if isinstance(n, cst.Call))
        kernel.tile_dims = _tile_dims(statement, set(constexprs), set(params) - set(constexprs))
        kernels[kernel.name] = kernel
    return kernels


def _is_reduction(call: cst.Call) -> bool:
    name = call_name(call)
    if name is None or "." not in name:
        return False  # builtin max()/min() of two scalars is not a reduction
    return name.rsplit(".", 1)[1] in REDUCE_METHODS


def _reducing_functions(functions: list[cst.FunctionDef]) -> set[str]:
    """Names of the @triton.jit functions that reduce: directly (tl.sum, tl.reduce...) or through a
    helper of the file they call (a lowered module's `_xf_welford`, `_xf_max2`)."""
    calls = {fn.name.value: {call_name(n) for n in walk(fn.body) if isinstance(n, cst.Call)} for fn in functions}
    reducing = {fn.name.value for fn in functions
                if any(_is_reduction(n) for n in walk(fn.body) if isinstance(n, cst.Call))}
    grown = True
    while grown:
        more = {name for name, called in calls.items() if name not in reducing and called & reducing}
        reducing |= more
        grown = bool(more)
    return reducing


def problem_class(fn: cst.FunctionDef, reducing: set[str] | None = None) -> str:
    """conv (a tl.dot kernel named so), gemm (tl.dot), gemm-epilogue (elementwise work on the
    accumulator after the K loop), reduction (tl.sum/tl.max/tl.min/..., or a call of a reducing
    helper in `reducing`), else elementwise. A kernel without tl.dot is no implicit-GEMM convolution
    whatever its name (Inductor names a convolution's epilogue `triton_poi_fused_convolution_...`)."""
    calls = [node for node in walk(fn.body) if isinstance(node, cst.Call)]
    if any(call_name(c) in DOT_CALLS for c in calls):
        if "conv" in fn.name.value.lower():
            return "conv"  # implicit-GEMM convolutions have their own tiles and config space
        return "gemm-epilogue" if _has_epilogue(fn) else "gemm"
    if any(_is_reduction(c) or call_name(c) in (reducing or set()) for c in calls):
        return "reduction"
    return "elementwise"


def _dot_loop(fn: cst.FunctionDef) -> tuple[cst.IndentedBlock, int, set[str]] | None:
    """The block holding the loop with the tl.dot, the loop's index in it, and the accumulator names."""
    for block in (n for n in walk(fn) if isinstance(n, cst.IndentedBlock)):
        for index, statement in enumerate(block.body):
            if not isinstance(statement, (cst.For, cst.While)):
                continue
            accs: set[str] = set()
            for node in walk(statement.body):
                if isinstance(node, (cst.Assign, cst.AugAssign)) and any(
                    call_name(c) in DOT_CALLS for c in walk(node.value) if isinstance(c, cst.Call)
                ):
                    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                    accs |= {t.value for t in targets if isinstance(t, cst.Name)}
            if accs:
                return block, index, accs
    return None


def _is_math(node: cst.BaseExpression, derived: set[str]) -> bool:
    """True if `node` computes on a derived name with more than a dtype cast."""
    for sub in walk(node):
        if isinstance(sub, (cst.BinaryOperation, cst.UnaryOperation)) and read_names(sub) & derived:
            return True
        if isinstance(sub, cst.Call) and read_names(sub) & derived:
            name = call_name(sub) or ""
            last = name.rsplit(".", 1)[-1]
            if last not in CAST_CALLS and name not in ("tl.store", "tl.load") and not last.startswith("store"):
                return True
    return False


def _has_epilogue(fn: cst.FunctionDef) -> bool:
    found = _dot_loop(fn)
    if found is None:
        return False
    block, index, derived = found
    derived = set(derived)
    for statement in block.body[index + 1 :]:
        for node in walk(statement):
            if isinstance(node, cst.Assign) and read_names(node.value) & derived:
                if _is_math(node.value, derived):
                    return True
                derived |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
            elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                if node.target.value in derived:
                    return True
            elif isinstance(node, cst.Call) and (call_name(node) or "").endswith("store"):
                values = node.args[1:2]
                if values and _is_math(values[0].value, derived):
                    return True
    return False


def program_id_axis(node: cst.CSTNode) -> int | None:
    """The literal axis of a `tl.program_id(k)` / `tl.program_id(axis=k)` call, else None."""
    if not isinstance(node, cst.Call) or call_name(node) not in PROGRAM_ID or not node.args:
        return None
    return int_value(node.args[0].value)


def pid_derived(fn: cst.FunctionDef) -> dict[str, set[int]]:
    """Names whose value depends on the program id, with the grid axes they depend on."""
    derived: dict[str, set[int]] = {}
    for node in walk(fn.body):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
            axes = _axes_of(node.value, derived)
            if not axes:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                for name in (n for n in walk(target) if isinstance(n, cst.Name)):
                    derived.setdefault(name.value, set()).update(axes)
    return derived


def _axes_of(node: cst.CSTNode, derived: dict[str, set[int]]) -> set[int]:
    axes: set[int] = set()
    for sub in walk(node):
        axis = program_id_axis(sub)
        if axis is not None:
            axes.add(axis)
    for name in read_names(node):
        axes |= derived.get(name, set())
    return axes


def block_dims(fn: cst.FunctionDef, constexprs: set[str]) -> set[str]:
    """constexprs that size a block: read in tl.arange / tl.zeros / tl.full or a block_shape."""
    dims: set[str] = set()
    for node in walk(fn.body):
        if isinstance(node, cst.Call):
            last = (call_name(node) or "").rsplit(".", 1)[-1]
            if last in ("arange", "zeros", "full", "make_tensor_descriptor", "reshape", "view"):
                dims |= read_names(node) & constexprs
            dims |= {n for a in node.args if a.keyword and a.keyword.value == "block_shape"
                     for n in read_names(a.value) & constexprs}
    return dims


def _grid_tiles(fn: cst.FunctionDef, constexprs: set[str]) -> dict[str, set[int]]:
    """Block-sizing constexprs multiplied by a program-id-derived value (`pid_m * BLOCK_M`);
    GROUP_SIZE_M-style ordering factors are not block sizes and are left out."""
    derived = pid_derived(fn)
    constexprs = block_dims(fn, constexprs)
    tiles: dict[str, set[int]] = {}
    for node in walk(fn.body):
        if not isinstance(node, cst.BinaryOperation) or not isinstance(node.operator, cst.Multiply):
            continue
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(side, cst.Name) and side.value in constexprs:
                axes = _axes_of(other, derived)
                if axes:
                    tiles.setdefault(side.value, set()).update(axes)
    return tiles


def _tile_dims(fn: cst.FunctionDef, constexprs: set[str], runtime: set[str]) -> dict[str, set[str]]:
    """Which size parameter each tile blocks, from `tl.cdiv(P, T)` and from masks comparing an
    offset built on `tl.arange(0, T)` with a parameter P."""
    dims: dict[str, set[str]] = {}
    offsets: dict[str, set[str]] = {}
    aliases = param_aliases(fn, runtime)

    def tiles_of(node: cst.CSTNode) -> set[str]:
        found: set[str] = set()
        for sub in walk(node):
            if isinstance(sub, cst.Call) and (call_name(sub) or "").endswith("arange"):
                found |= read_names(sub) & constexprs
        for name in read_names(node):
            found |= offsets.get(name, set())
        return found

    for node in walk(fn.body):
        if isinstance(node, cst.Assign):
            tiles = tiles_of(node.value)
            for target in node.targets:
                if tiles and isinstance(target.target, cst.Name):
                    offsets.setdefault(target.target.value, set()).update(tiles)
        elif isinstance(node, cst.Call) and (call_name(node) or "").endswith("cdiv") and len(node.args) == 2:
            size, tile = (read_names(a.value) for a in node.args)
            size = {aliases.get(n, n) for n in size}
            for t in tile & constexprs:
                dims.setdefault(t, set()).update(size & runtime)
        elif isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            right = node.comparisons[0].comparator
            size = aliases.get(right.value, right.value) if isinstance(right, cst.Name) else None
            if size in runtime:
                for t in tiles_of(node.left):
                    dims.setdefault(t, set()).add(size)
    return dims


def _loop_tiles(fn: cst.FunctionDef, constexprs: set[str]) -> set[str]:
    return {
        name
        for node in walk(fn.body)
        if isinstance(node, cst.For)
        for name in read_names(node.iter) & constexprs
    }


def param_aliases(fn: cst.FunctionDef, params: set[str]) -> dict[str, str]:
    """Locals bound once, to a parameter and nothing else (`M = ks0`, as Inductor's templates name
    their sizes), -> that parameter."""
    bound: dict[str, list[cst.BaseExpression]] = {}
    for node in walk(fn.body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                for name in (n for n in walk(target.target) if isinstance(n, cst.Name)):
                    bound.setdefault(name.value, []).append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and isinstance(node.target, cst.Name):
            bound.setdefault(node.target.value, []).append(cst.Name("_"))  # rebound: no alias
    return {name: values[0].value for name, values in bound.items()
            if len(values) == 1 and isinstance(values[0], cst.Name) and values[0].value in params
            and name not in params}


def size_params(kernel: Kernel) -> list[str]:
    """Runtime parameters that are problem sizes: compared with offsets (masks), or bounds of
    loops and tl.cdiv, directly or through a local alias; strides and pointers excluded. These make
    a good autotune key."""
    runtime = [p for p in kernel.params if p not in kernel.constexprs]
    aliases = param_aliases(kernel.node, set(runtime))
    used: set[str] = set()
    for node in walk(kernel.node.body):
        if isinstance(node, cst.Comparison):
            used |= read_names(node)
        elif isinstance(node, cst.For):
            used |= read_names(node.iter)
        elif isinstance(node, cst.Call) and (call_name(node) or "").endswith("cdiv"):
            used |= read_names(node)
    used |= {aliases[name] for name in used if name in aliases}
    return [p for p in runtime if p in used and not p.startswith("stride") and not p.endswith("_ptr")]


def _address_roots(node: cst.BaseExpression, assigns: dict[str, cst.BaseExpression], depth: int = 0) -> set[str]:
    """Names added into an address (`base + offs * stride` -> base, offs); locals are followed to
    their assignment so `row_ptr = x_ptr + row * stride` leads back to x_ptr."""
    if depth > 8:
        return set()
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _address_roots(node.left, assigns, depth + 1) | _address_roots(node.right, assigns, depth + 1)
    if isinstance(node, cst.Name):
        if node.value in assigns:
            return {node.value} | _address_roots(assigns[node.value], assigns, depth + 1)
        return {node.value}
    return set()


def stored_and_read_pointers(kernel: Kernel) -> list[str]:
    """Pointer parameters the kernel both reads and writes, or updates atomically: running it
    twice (as autotuning does) would change their contents, so autotune must restore them."""
    assigns = {
        t.target.value: node.value
        for node in walk(kernel.node.body)
        if isinstance(node, cst.Assign)
        for t in node.targets
        if isinstance(t.target, cst.Name)
    }
    touched: dict[str, set[str]] = {"load": set(), "store": set(), "atomic": set()}
    for node in walk(kernel.node.body):
        if not isinstance(node, cst.Call) or not node.args:
            continue
        last = (call_name(node) or "").rsplit(".", 1)[-1]
        kind = "atomic" if last.startswith("atomic_") else last
        if kind in touched:
            touched[kind] |= _address_roots(node.args[0].value, assigns)
    hit = (touched["load"] & touched["store"]) | touched["atomic"]
    return [p for p in kernel.params if p in hit and p not in kernel.constexprs]
