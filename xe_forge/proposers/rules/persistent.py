"""persistent-loop (persistent): one program per SM / Xe-core, each looping over output tiles.

A GEMM launched with one program per tile pays a launch per tile and leaves the last wave part
empty; a persistent kernel launches min(cores, tiles) programs that stride through the tiles
(Triton tutorial 09; knowledge_base/examples/gemm_persistent.py). The kernel body after its
program-id line moves into `for tile_id in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0))`;
work that does not depend on the tile (tensor descriptors, K offsets) stays before the loop. A 1-D
grouped kernel keeps its grouped order (`pid = tile_id`); a 2-D one walks tiles row-major. The
host launches min(cores, tiles) programs, the core count read from the device at run time.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, call_name, fresh_name, read_names, walk
from xe_forge.proposers.rules.grid import grid_var_private
from xe_forge.proposers.rules.kernels import Kernel, pid_derived, program_id_axis
from xe_forge.proposers.rules.launches import launches_of
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.roles import tile_roles
from xe_forge.proposers.rules.synth import rebuilt_grid

SLOTS_HELPER = '''def _program_slots(device) -> int:
    """Programs a persistent kernel launches: one per SM (NVIDIA) or Xe-core (Intel); a few on the CPU."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    if device.type == "xpu":
        props = torch.xpu.get_device_properties(device)
        return int(getattr(props, "gpu_subslice_count", 0) or props.max_compute_units // 8)
    return 4
'''


def _pid_lines(kernel: Kernel) -> dict[int, tuple[int, str]]:
    """Axis -> (index of its `name = tl.program_id(axis)` line in the body, name)."""
    found: dict[int, tuple[int, str]] = {}
    for index, line in enumerate(kernel.node.body.body):
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(line.body[0], cst.Assign):
            small = line.body[0]
            axis = program_id_axis(small.value)
            if axis is not None and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                found[axis] = (index, small.targets[0].target.value)
    calls = [c for c in walk(kernel.node.body) if isinstance(c, cst.Call)]
    if any((call_name(c) or "").endswith("num_programs") for c in calls):
        raise NotApplicable(f"{kernel.name} already reads tl.num_programs")
    ids = [c for c in calls if (call_name(c) or "").endswith("program_id")]
    if sorted(found) not in ([0], [0, 1]) or len(ids) != len(found):
        raise NotApplicable(f"{kernel.name} does not start from `pid = tl.program_id(0)` (and `tl.program_id(1)`) "
                            "lines at its top level")
    return found


def _tile_sizes(kernel: Kernel) -> list[tuple[str, str]]:
    """(size parameter, tile) of the output rows and columns (tile roles from the tl.dot operands)."""
    roles = tile_roles(kernel)
    pairs = []
    for key in ("BLOCK_M", "BLOCK_N"):
        tile = roles.get(key)
        if tile is None or tile not in kernel.grid_tiles:
            raise NotApplicable(f"cannot tell which tile of {kernel.name} partitions the output "
                                f"{'rows' if key == 'BLOCK_M' else 'columns'} through the program id")
        sizes = sorted(kernel.tile_dims.get(tile, set()))
        if len(sizes) != 1:
            raise NotApplicable(f"cannot tell which size {tile} tiles in {kernel.name}")
        pairs.append((sizes[0], tile))
    return pairs


def _body(kernel: Kernel, pids: dict[int, tuple[int, str]], pairs: list[tuple[str, str]]) -> list[cst.BaseStatement]:
    body = list(kernel.node.body.body)
    last = max(index for index, _ in pids.values())
    if any(isinstance(n, cst.Return) for n in walk(kernel.node.body)):
        raise NotApplicable(f"{kernel.name} returns early; inside a tile loop that would skip the remaining tiles")
    derived = set(pid_derived(kernel.node)) | {name for _, name in pids.values()}
    before = [line for i, line in enumerate(body) if i < last and i not in {j for j, _ in pids.values()}]
    rest = body[last + 1:]
    hoisted = []
    while rest and isinstance(rest[0], cst.SimpleStatementLine) and not (read_names(rest[0]) & derived):
        hoisted.append(rest.pop(0))  # tile-independent setup (descriptors, K offsets) runs once
    if any(read_names(line) & derived for line in before):
        raise NotApplicable(f"{kernel.name} computes from the program id before its last program-id line")
    taken = {n.value for n in walk(kernel.node) if isinstance(n, cst.Name)}
    tile, tiles = fresh_name("tile_id", taken), fresh_name("num_tiles", taken)
    (m, bm), (n, bn) = pairs
    head = [cst.parse_statement(f"{tiles} = tl.cdiv({m}, {bm}) * tl.cdiv({n}, {bn})\n")]
    if len(pids) == 1:
        mapping = [f"{pids[0][1]} = {tile}\n"]
    else:
        mapping = [f"{pids[0][1]} = {tile} // tl.cdiv({n}, {bn})\n", f"{pids[1][1]} = {tile} % tl.cdiv({n}, {bn})\n"]
    loop_body = [cst.parse_statement(text) for text in mapping] + rest
    loop = cst.parse_statement(f"for {tile} in tl.range(tl.program_id(0), {tiles}, tl.num_programs(0)):\n    pass\n")
    loop = loop.with_changes(body=loop.body.with_changes(body=loop_body))  # type: ignore[attr-defined]
    return before + hoisted + head + [loop]


def _address_params(kernel: Kernel) -> set[str]:
    """Parameters a load, store or tensor descriptor uses as its base: the tensors."""
    found: set[str] = set()
    for node in walk(kernel.node.body):
        last = (call_name(node) or "").rsplit(".", 1)[-1] if isinstance(node, cst.Call) else ""
        if last in ("load", "store", "make_tensor_descriptor", "atomic_add") and node.args:  # type: ignore[union-attr]
            found |= read_names(node.args[0].value) & set(kernel.params)  # type: ignore[union-attr]
    return found


def _persistent(ctx: RecipeContext, kernel: Kernel, helper: list[str]) -> tuple[dict[cst.CSTNode, Edit], str]:
    pids = _pid_lines(kernel)
    pairs = _tile_sizes(kernel)
    new_body = _body(kernel, pids, pairs)
    edits: dict[cst.CSTNode, Edit] = {
        kernel.node: lambda fn: fn.with_changes(body=fn.body.with_changes(body=new_body)),  # type: ignore[attr-defined]
    }
    meta = {t: f'META["{t}"]' for t in kernel.grid_tiles} if kernel.autotune is not None else {}
    pointers = [p for p in kernel.params if p in _address_params(kernel)]
    for launch in launches_of(ctx.launches, kernel):
        bound = launch.bound()
        first = next((bound[p].value for p in pointers if p in bound), None)
        if first is None:
            raise NotApplicable(f"the launch of {kernel.name} passes no tensor to read the device from")
        rebuilt = rebuilt_grid(ctx, kernel, launch, meta, meta="META" if meta else None)
        body = rebuilt.body if isinstance(rebuilt, cst.Lambda) else rebuilt
        count = " * ".join(f"({cst.Module(body=[]).code_for_node(e.value)})" for e in body.elements)  # type: ignore[attr-defined]
        device = cst.Module(body=[]).code_for_node(first)
        grid = cst.parse_expression(f"(min(_program_slots({device}.device), {count}),)")
        new = rebuilt.with_changes(body=grid) if isinstance(rebuilt, cst.Lambda) else grid
        old = ctx.grid(launch)
        if old.binding is not None and grid_var_private(old, launch.scope or ctx.module):
            edits[old.binding.value] = new  # `grid = ...` that only this launch reads: rewrite it there
        else:
            edits[launch.grid] = new
    helper.append(kernel.name)
    return edits, f"made {kernel.name} persistent: min(cores, tiles) programs loop over its output tiles"


@register("persistent-loop")
def persistent_loop(ctx: RecipeContext) -> Applied:
    if any(isinstance(n, cst.FunctionDef) and n.name.value == "_program_slots" for n in ctx.module.body):
        raise NotApplicable("the file already defines _program_slots (a persistent launch)")
    done: list[str] = []
    applied = per_kernel(ctx, lambda c, k: _persistent(c, k, done), "make the kernel persistent")
    module = cst.parse_module(applied.code)
    helper = cst.parse_module(SLOTS_HELPER).body[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    index = next((i for i, s in enumerate(module.body) if isinstance(s, cst.ClassDef)), len(module.body))
    body = list(module.body)
    body.insert(index, helper)
    return Applied(code=module.with_changes(body=body).code, rationale=applied.rationale)
