"""Which constexpr of a kernel plays which tile role, whatever the author named it.

Recipes and config spaces speak of BLOCK_M, BLOCK_N, BLOCK_K (a GEMM's output rows, output columns
and reduction step) and BLOCK_SIZE (a 1-D kernel's block). Seeds call them BM, TILE_M, BLOCK or
anything else. For a kernel with tl.dot the roles are read from the dot's operands: the tile whose
offsets index the rows of the left operand is M, its columns (the right operand's rows) K, and the
right operand's columns N (through `x[:, None]` / `x[None, :]` in a pointer load, or a descriptor's
block_shape). A kernel with a single tile that partitions its grid or strides a loop gets
BLOCK_SIZE. A recipe key that is literally a constexpr of the kernel keeps that meaning only when
no role says otherwise.
"""

from __future__ import annotations

import libcst as cst

from xe_forge.proposers.rules.cst_tools import call_name, read_names, walk
from xe_forge.proposers.rules.kernels import DOT_CALLS, Kernel

ROLE_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K")


def _assignments(fn: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    found: dict[str, cst.BaseExpression] = {}
    for node in walk(fn.body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            found.setdefault(node.targets[0].target.value, node.value)
    return found


def _tiles_of(node: cst.CSTNode, assigns: dict[str, cst.BaseExpression], constexprs: set[str],
              seen: frozenset[str] = frozenset()) -> set[str]:
    """Constexprs an offset vector is built from through tl.arange (following local assignments)."""
    tiles: set[str] = set()
    for sub in walk(node):
        if isinstance(sub, cst.Call) and (call_name(sub) or "").endswith("arange"):
            tiles |= read_names(sub) & constexprs
    for name in read_names(node) - seen:
        if name in assigns:
            tiles |= _tiles_of(assigns[name], assigns, constexprs, seen | {name})
    return tiles


def _broadcast_axis(sub: cst.Subscript) -> int | None:
    """0 for `x[:, None]`, 1 for `x[None, :]`, else None."""
    if len(sub.slice) != 2:
        return None
    kinds = ["slice" if isinstance(e.slice, cst.Slice) else
             "none" if isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name)
             and e.slice.value.value == "None" else "other" for e in sub.slice]
    return {("slice", "none"): 0, ("none", "slice"): 1}.get((kinds[0], kinds[1]))


def _operand_dims(kernel: Kernel, operand: cst.BaseExpression, assigns: dict[str, cst.BaseExpression]) -> list[set[str]]:
    """Tiles of dim 0 and dim 1 of a dot operand: through `.to()` / `.T`, a local, then its load."""
    transposed = False
    for _ in range(8):
        if isinstance(operand, cst.Call) and isinstance(operand.func, cst.Attribute) and operand.func.attr.value == "to":
            operand = operand.func.value
        elif isinstance(operand, cst.Attribute) and operand.attr.value == "T":
            operand, transposed = operand.value, not transposed
        elif isinstance(operand, cst.Name) and operand.value in assigns:
            operand = assigns[operand.value]
        else:
            break
    dims: list[set[str]] = [set(), set()]
    constexprs = set(kernel.constexprs)
    if isinstance(operand, cst.Call) and (call_name(operand) or "").endswith("load") and operand.args:
        if isinstance(operand.func, cst.Attribute) and operand.func.attr.value == "load" and \
                isinstance(operand.func.value, cst.Name) and operand.func.value.value in assigns:
            dims = _descriptor_dims(assigns[operand.func.value.value], constexprs)
        else:
            address = operand.args[0].value
            pending = [address]
            while pending:
                node = pending.pop()
                for sub in walk(node):
                    if isinstance(sub, cst.Subscript) and (axis := _broadcast_axis(sub)) is not None:
                        dims[axis] |= _tiles_of(sub.value, assigns, constexprs)
                    elif isinstance(sub, cst.Name) and sub.value in assigns and sub is not node:
                        pending.append(assigns[sub.value])
                if isinstance(node, cst.Name) and node.value in assigns:
                    pending.append(assigns[node.value])
    return dims[::-1] if transposed else dims


def _descriptor_dims(desc: cst.BaseExpression, constexprs: set[str]) -> list[set[str]]:
    if not isinstance(desc, cst.Call):
        return [set(), set()]
    shape = next((a.value for a in desc.args if a.keyword and a.keyword.value == "block_shape"), None)
    if shape is None and len(desc.args) >= 4:
        shape = desc.args[3].value
    if isinstance(shape, cst.List | cst.Tuple) and len(shape.elements) == 2:
        return [read_names(e.value) & constexprs for e in shape.elements]
    return [set(), set()]


def tile_roles(kernel: Kernel) -> dict[str, str]:
    """Recipe key (BLOCK_M/N/K, BLOCK_SIZE) -> the kernel's constexpr that plays that role."""
    roles: dict[str, str] = {}
    assigns = _assignments(kernel.node)
    dots = [n for n in walk(kernel.node.body) if isinstance(n, cst.Call) and call_name(n) in DOT_CALLS]
    if dots and len(dots[0].args) >= 2:
        a = _operand_dims(kernel, dots[0].args[0].value, assigns)
        b = _operand_dims(kernel, dots[0].args[1].value, assigns)
        for key, found in (("BLOCK_M", a[0]), ("BLOCK_K", a[1] | b[0]), ("BLOCK_N", b[1])):
            if len(found) == 1:
                roles[key] = next(iter(found))
    tunable = [t for t in kernel.constexprs if t in kernel.grid_tiles or t in kernel.loop_tiles]
    if not dots and len(tunable) == 1:
        roles["BLOCK_SIZE"] = tunable[0]
    return roles


def map_keys(kernel: Kernel, keys: list[str]) -> dict[str, str]:
    """Recipe or config keys -> the kernel's constexprs they mean: a key that is literally a
    constexpr of the kernel means that one; the other keys take their role's tile, if unclaimed."""
    mapped = {key: key for key in keys if key in kernel.constexprs}
    roles = tile_roles(kernel)
    for key in keys:
        name = roles.get(key)
        if key not in mapped and name is not None and name not in mapped.values():
            mapped[key] = name
    return mapped
