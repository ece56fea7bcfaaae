"""tensor-descriptors (block_io): tl.dot operands loaded through tensor descriptors.

A tile loaded through a tensor of pointers is a gather the compiler has to prove contiguous; a
tensor descriptor states the tile's shape and strides, so Hopper moves it with TMA and triton-xpu
with 2D block loads into DPAS (xpu-tensor-descriptors-for-dot, sm90-tma-descriptor-requirements).
Descriptors need a unit last stride and 16-byte aligned rows, which a launch cannot always promise,
so the kernel is kept and a `<name>_tma` twin with descriptor loads is added; each launch takes the
twin when `_tma_ready(...)` holds for the tensors it reads. Out-of-bounds elements read as zero, as
the masked loads padded them; a tile whose unit stride is its first dim is loaded transposed.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.kb.loader import bundled_kb
from xe_forge.proposers.rules.addresses import AddressReader, TileLoad
from xe_forge.proposers.rules.autotune import triton_alias, with_triton_import
from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, call_name, code_of, fresh_name, rewrite, walk
from xe_forge.proposers.rules.kernels import DOT_CALLS, Kernel
from xe_forge.proposers.rules.launches import launches_of
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.targeting import as_toolchain, family
from xe_forge.targets.xpu import BLOCK_IO_ALL_LAYOUTS, BLOCK_IO_DEFAULT_FACT

HELPERS = '''def _tma_ready(*tensors):
    """Tensor descriptors need a unit last stride and 16-byte aligned rows and base address."""
    return all(t.stride(-1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0 and t.data_ptr() % 16 == 0
               for t in tensors)


def _tma_scratch(size: int, alignment: int, stream):
    """Global scratch memory that device-side tensor descriptors need on NVIDIA GPUs."""
    return torch.empty(size, device="cuda", dtype=torch.int8)
'''


def _dot_loop(kernel: Kernel) -> cst.For:
    loops = [n for n in walk(kernel.node.body) if isinstance(n, cst.For)
             and any(isinstance(c, cst.Call) and call_name(c) in DOT_CALLS for c in walk(n.body))]
    if len(loops) != 1:
        raise NotApplicable(f"{kernel.name} has {len(loops)} loops around tl.dot; one K loop is supported")
    return loops[0]


def _operand_load(reader: AddressReader, operand: cst.BaseExpression) -> cst.Call:
    for _ in range(6):
        if isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute) and operand.func.attr.value == "to":
            operand = operand.func.value
        elif isinstance(operand, cst.Name) and reader.value_of(operand.value) is not None:
            operand = reader.value_of(operand.value)  # type: ignore[assignment]
        else:
            break
    if not (isinstance(operand, cst.Call) and call_name(operand) in ("tl.load", "triton.language.load")):
        raise NotApplicable(f"the tl.dot operand `{code_of(operand)}` is not a tl.load")
    if not any(operand is n for n in walk(reader.loop.body)):
        raise NotApplicable(f"the tl.dot operand `{code_of(operand)}` is not loaded inside the K loop")
    return operand


def _unit_dim(ctx: RecipeContext, kernel: Kernel, tile: TileLoad) -> int:
    """Which dim of the tile is contiguous: an unscaled offset, or a stride every launch passes as
    `t.stride(-1)` / `t.stride(1)` / 1."""
    def unit(stride: str | None) -> bool:
        if stride is None:
            return True
        texts = [code_of(a.value).replace(" ", "") for launch in launches_of(ctx.launches, kernel)
                 if (a := launch.bound().get(stride)) is not None]
        return bool(texts) and all(t == "1" or t.endswith((".stride(1)", ".stride(-1)")) for t in texts)

    units = [i for i, dim in enumerate(tile.dims) if unit(dim.stride)]
    if len(units) != 1:
        raise NotApplicable(f"cannot tell which dim of the tile `{code_of(tile.call.args[0].value)}` has stride 1")
    return units[0]


def _descriptor(name: str, tile: TileLoad, unit: int) -> tuple[str, str]:
    """The descriptor's creation line and the expression that replaces the load."""
    dims = tile.dims if unit == 1 else tile.dims[::-1]
    outer = dims[0].stride or "1"
    line = (f"{name} = tl.make_tensor_descriptor({tile.base}, shape=[{dims[0].size}, {dims[1].size}], "
            f"strides=[{outer}, 1], block_shape=[{dims[0].tile}, {dims[1].tile}])")
    load = f"{name}.load([{dims[0].start}, {dims[1].start}])"
    return line, load if unit == 1 else f"{load}.T"


def _twin(ctx: RecipeContext, kernel: Kernel, ready: list[str]) -> tuple[dict[cst.CSTNode, Edit], str]:
    if any((call_name(n) or "").endswith("make_tensor_descriptor") for n in walk(kernel.node) if isinstance(n, cst.Call)):
        raise NotApplicable(f"{kernel.name} already loads through tensor descriptors")
    loop = _dot_loop(kernel)
    reader = AddressReader(kernel, loop)
    dots = [c for c in walk(loop.body) if isinstance(c, cst.Call) and call_name(c) in DOT_CALLS]
    loads = {id(call): call for dot in dots for call in (_operand_load(reader, a.value) for a in dot.args[:2])}
    taken = {n.value for n in walk(kernel.node) if isinstance(n, cst.Name)}
    edits: dict[cst.CSTNode, Edit] = {}
    setup: list[cst.BaseStatement] = []
    bases: list[str] = []
    for call in loads.values():
        tile = reader.load(call)
        name = fresh_name(f"{tile.base.removesuffix('_ptr')}_desc", taken)
        taken.add(name)
        line, replacement = _descriptor(name, tile, _unit_dim(ctx, kernel, tile))
        setup.append(cst.parse_statement(line + "\n"))
        edits[call] = cst.parse_expression(replacement)
        bases.append(tile.base)
        edits.update(_dead_pointer(kernel, tile))
    twin_name = fresh_name(f"{kernel.name}_tma", {n.value for n in walk(ctx.module) if isinstance(n, cst.Name)})
    twin = rewrite(kernel.node, edits)
    body = list(twin.body.body)  # type: ignore[attr-defined]
    doc = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
        and isinstance(body[0].body[0].value, cst.SimpleString) else 0
    twin = twin.with_changes(name=cst.Name(twin_name),  # type: ignore[attr-defined]
                             body=twin.body.with_changes(body=body[:doc] + setup + body[doc:]))  # type: ignore[attr-defined]
    module_edits: dict[cst.CSTNode, Edit] = {kernel.node: lambda fn: cst.FlattenSentinel([fn, twin])}
    for launch in launches_of(ctx.launches, kernel):
        module_edits.update(_dispatch(ctx, launch, twin_name, bases))
    ready.append(kernel.name)
    return module_edits, f"added {twin_name}, loading the tl.dot operands of {kernel.name} through tensor descriptors"


def _dead_pointer(kernel: Kernel, tile: TileLoad) -> dict[cst.CSTNode, Edit]:
    """Drop a pointer tensor's setup and increments once the descriptor load replaced its only load."""
    if tile.pointer_var is None:
        return {}
    name = tile.pointer_var
    loads = [n for n in walk(kernel.node.body) if isinstance(n, cst.Call) and (call_name(n) or "").endswith("load")
             and any(isinstance(x, cst.Name) and x.value == name for x in walk(n))]
    if len(loads) != 1:
        return {}
    return {line: cst.RemovalSentinel.REMOVE for line in walk(kernel.node.body)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and (
                (isinstance(line.body[0], cst.Assign) and code_of(line.body[0].targets[0].target) == name)
                or (isinstance(line.body[0], cst.AugAssign) and code_of(line.body[0].target) == name))}


def _dispatch(ctx: RecipeContext, launch, twin: str, bases: list[str]) -> dict[cst.CSTNode, Edit]:  # noqa: ANN001
    """`if _tma_ready(...): <twin launch> else: <launch>` in place of the launch statement."""
    line = next((n for n in walk(launch.scope or ctx.module) if isinstance(n, cst.SimpleStatementLine)
                 and len(n.body) == 1 and isinstance(n.body[0], cst.Expr) and n.body[0].value is launch.call), None)
    if line is None:
        raise NotApplicable(f"the launch of {launch.kernel.name} is not a statement of its own")
    bound = launch.bound()
    tensors = [code_of(bound[b].value) for b in dict.fromkeys(bases) if b in bound]
    if len(tensors) != len(dict.fromkeys(bases)):
        raise NotApplicable(f"the launch of {launch.kernel.name} does not pass the loaded tensors by parameter")
    triton = triton_alias(ctx.module) or "triton"
    call = code_of(launch.call).replace(f"{launch.kernel.name}[", f"{twin}[", 1)
    text = (f"if _tma_ready({', '.join(tensors)}):  # TMA on Hopper, 2D block I/O on Intel Xe\n"
            f"    if {tensors[0]}.device.type == \"cuda\":\n        {triton}.set_allocator(_tma_scratch)\n"
            f"    {call}\nelse:\n    pass\n")
    guard = cst.parse_statement(text)

    def replace(updated: cst.CSTNode) -> cst.CSTNode:
        orelse = guard.orelse.with_changes(body=guard.orelse.body.with_changes(body=[updated]))  # type: ignore[union-attr]
        return guard.with_changes(orelse=orelse)  # type: ignore[union-attr]

    return {line: replace}


def non_dot_block_io_note(ctx: RecipeContext) -> str:
    """What the Intel compiler does for the 2D loads of a file without tl.dot, on the run's toolchain:
    the recommendation a refusal carries, since only the environment (not the kernel) can change it."""
    if family(ctx.target) != "intel" or any(k.uses_dot for k in ctx.kernels.values()):
        return ""
    entry = bundled_kb().fact_entry(BLOCK_IO_DEFAULT_FACT, ctx.target, as_toolchain(ctx.toolchain))
    if entry is None:
        return ""
    on = next(f.value for f in entry.facts if f.key == BLOCK_IO_DEFAULT_FACT)
    if on:
        return (f"; {ctx.toolchain.name} {ctx.toolchain.version} gives 2D loads that feed no dot block I/O without a "
                f"rewrite [{entry.id}]")
    return (f"; on {ctx.toolchain.name} {ctx.toolchain.version} 2D loads that feed no dot get block I/O only with "
            f"{BLOCK_IO_ALL_LAYOUTS}=1, which a kernel file cannot set: this run's workers set it (see the report's "
            f"worker environment); set it where the kernel runs, or use triton-xpu >= 3.7.1 [{entry.id}]")


@register("tensor-descriptors")
def tensor_descriptors(ctx: RecipeContext) -> Applied:
    if any(isinstance(n, cst.FunctionDef) and n.name.value == "_tma_ready" for n in ctx.module.body):
        raise NotApplicable("the file already dispatches to tensor-descriptor kernels (_tma_ready)")
    done: list[str] = []
    try:
        applied = per_kernel(ctx, lambda c, k: _twin(c, k, done), "load through tensor descriptors")
    except NotApplicable as refusal:
        raise NotApplicable(refusal.reason + non_dot_block_io_note(ctx)) from refusal
    module = cst.parse_module(applied.code)
    spaced = [cst.EmptyLine(), cst.EmptyLine()]
    helpers = [h.with_changes(leading_lines=spaced) for h in cst.parse_module(HELPERS).body]
    index = next((i for i, s in enumerate(module.body) if isinstance(s, cst.ClassDef)), len(module.body))
    body = list(module.body)
    body[index:index] = helpers
    code = module.with_changes(body=body).code
    if triton_alias(ctx.module) is None:  # the dispatch calls triton.set_allocator; the file had only `from triton import`
        code = with_triton_import(code)
    return Applied(code=code, rationale=applied.rationale)
