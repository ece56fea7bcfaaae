"""Reading a tl.dot operand's pointer load as a 2-D tile of a strided tensor.

`tl.load(x_ptr + rows[:, None] * stride_r + cols[None, :] * stride_c, mask=..., other=0.0)`, written
inline or through a pointer tensor built before the K loop and advanced by `ptrs += BLOCK_K * stride`,
is the tile [start_r : start_r + T_r, start_c : start_c + T_c] of a tensor based at x_ptr. This module
recovers base, strides, tile sizes, start offsets and the size parameters bounding each dim, so
block_io.py can load the same tile through a tensor descriptor. Anything it cannot read this way is
a NotApplicable naming the expression.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from xe_forge.proposers.rules.cst_tools import call_name, code_of, int_value, read_names, walk
from xe_forge.proposers.rules.kernels import Kernel
from xe_forge.proposers.rules.models import NotApplicable


@dataclass
class Dim:
    start: str
    """Expression of the tile's first index along this dim at the load site."""
    tile: str
    stride: str | None
    """The stride parameter, or None when the address adds the offsets unscaled (stride 1)."""
    size: str


@dataclass
class TileLoad:
    call: cst.Call
    base: str
    dims: list[Dim]
    pointer_var: str | None
    """The pointer tensor the load reads, when it is one (its setup and increments go away)."""


def _terms(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _broadcast(node: cst.BaseExpression) -> tuple[int, cst.BaseExpression] | None:
    """(dim, vector) for `v[:, None]` (dim 0) or `v[None, :]` (dim 1)."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 2:
        return None
    first, second = (e.slice for e in node.slice)
    is_none = [isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == "None" for s in (first, second)]
    is_all = [isinstance(s, cst.Slice) for s in (first, second)]
    if is_all[0] and is_none[1]:
        return 0, node.value
    if is_none[0] and is_all[1]:
        return 1, node.value
    return None


def _scaled(term: cst.BaseExpression) -> tuple[int, cst.BaseExpression, str | None] | None:
    """(dim, vector, stride) of `v[:, None] * s`, `s * v[None, :]` or an unscaled `v[:, None]`."""
    found = _broadcast(term)
    if found is not None:
        return found[0], found[1], None
    if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply):
        for side, other in ((term.left, term.right), (term.right, term.left)):
            found = _broadcast(side)
            if found is not None and isinstance(other, cst.Name):
                return found[0], found[1], other.value
    return None


class AddressReader:
    """Reads the loads of one kernel; `assigns` maps a local to its (single) assigned value."""

    def __init__(self, kernel: Kernel, loop: cst.For) -> None:
        self.kernel, self.loop = kernel, loop
        self.assigns: dict[str, list[cst.BaseExpression]] = {}
        for node in walk(kernel.node.body):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                self.assigns.setdefault(node.targets[0].target.value, []).append(node.value)

    def value_of(self, name: str) -> cst.BaseExpression | None:
        values = self.assigns.get(name, [])
        return values[0] if len(values) == 1 else None

    def vector(self, node: cst.BaseExpression) -> tuple[str, str]:
        """(start, tile) of an offset vector `start + tl.arange(0, T)` (through locals, `% size`)."""
        for _ in range(6):
            if isinstance(node, cst.Name) and self.value_of(node.value) is not None:
                node = self.value_of(node.value)  # type: ignore[assignment]
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
                node = node.left  # wrapped rows (`% M`): the descriptor zero-fills instead
            else:
                break
        terms = _terms(node)
        aranges = [t for t in terms if isinstance(t, cst.Call) and (call_name(t) or "").endswith("arange")]
        rest = [t for t in terms if t not in aranges]
        names = [t for t in rest if isinstance(t, cst.Name) and self.value_of(t.value) is not None]
        if not aranges and len(names) == 1:  # `k0 + offs_k` with offs_k = tl.arange(0, BK)
            start, tile = self.vector(names[0])
            rest = [t for t in rest if t is not names[0]] + ([cst.parse_expression(start)] if start != "0" else [])
        elif len(aranges) == 1 and int_value(aranges[0].args[0].value) == 0:
            tile = code_of(aranges[0].args[1].value)
        else:
            raise NotApplicable(f"`{code_of(node)}` is not an offset vector `start + tl.arange(0, T)`")
        if tile not in self.kernel.constexprs:
            raise NotApplicable(f"the tile `{tile}` of `{code_of(node)}` is not a constexpr parameter")
        start = " + ".join(f"({code_of(t)})" if isinstance(t, cst.BinaryOperation) else code_of(t) for t in rest)
        return start or "0", tile

    def size_of(self, tile: str) -> str:
        sizes = sorted(self.kernel.tile_dims.get(tile, set()))
        if len(sizes) != 1:
            raise NotApplicable(f"cannot tell which size parameter bounds the tile {tile}")
        return sizes[0]

    def load(self, call: cst.Call) -> TileLoad:
        """The tile a `tl.load` inside the K loop reads."""
        other = next((a.value for a in call.args if a.keyword and a.keyword.value == "other"), None)
        if other is not None and int_value(other) != 0 and not (isinstance(other, cst.Float) and float(other.value) == 0):
            raise NotApplicable(f"the load pads with `{code_of(other)}`; descriptors pad with zeros")
        address = call.args[0].value
        pointer_var, advance = None, None
        if isinstance(address, cst.Name) and address.value not in self.kernel.params:
            pointer_var = address.value
            address, advance = self._pointer(address.value)
        base = [t for t in _terms(address) if isinstance(t, cst.Name) and t.value in self.kernel.params]
        scaled = [_scaled(t) for t in _terms(address) if t not in base]
        if len(base) != 1 or None in scaled or sorted(s[0] for s in scaled) != [0, 1]:  # type: ignore[index]
            raise NotApplicable(f"the address `{code_of(address)}` is not `base + rows[:, None] * s + cols[None, :] * t`")
        dims: list[Dim] = []
        for _, vector, stride in sorted(scaled, key=lambda s: s[0]):  # type: ignore[index, arg-type]
            start, tile = self.vector(vector)
            if advance is not None and advance[0] == (stride or "1"):
                start = f"{start} + {advance[1]}" if start != "0" else advance[1]
            dims.append(Dim(start, tile, stride, self.size_of(tile)))
        return TileLoad(call, base[0].value, dims, pointer_var)

    def _pointer(self, name: str) -> tuple[cst.BaseExpression, tuple[str, str] | None]:
        """A pointer tensor's initial address and how the K loop advances it: (stride, offset)."""
        value = self.value_of(name)
        if value is None:
            raise NotApplicable(f"the pointer tensor `{name}` is assigned more than once")
        steps = [n for n in walk(self.loop.body) if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name)
                 and n.target.value == name]
        if len(steps) != 1 or not isinstance(steps[0].operator, cst.AddAssign):
            raise NotApplicable(f"`{name}` is not advanced exactly once per K step")
        step = steps[0].value
        factors = [step.left, step.right] if isinstance(step, cst.BinaryOperation) and isinstance(
            step.operator, cst.Multiply) else [step]
        strides = [f.value for f in factors if isinstance(f, cst.Name) and f.value not in self.kernel.constexprs]
        tiles = [f.value for f in factors if isinstance(f, cst.Name) and f.value in self.kernel.constexprs]
        if len(tiles) != 1 or len(strides) > 1:
            raise NotApplicable(f"`{name} += {code_of(step)}` is not `TILE * stride`")
        return value, (strides[0] if strides else "1", self._iteration_offset(tiles[0]))

    def _iteration_offset(self, tile: str) -> str:
        """How far the pointer has moved at the load: the loop variable, times the tile when the
        loop counts iterations (`range(0, tl.cdiv(K, BK))`) rather than elements (`range(0, K, BK)`)."""
        target = self.loop.target
        if not isinstance(target, cst.Name) or not isinstance(self.loop.iter, cst.Call) or not self.loop.iter.args:
            raise NotApplicable("the K loop is not `for k in range(...)`")
        args = [a.value for a in self.loop.iter.args]
        if len(args) >= 2 and int_value(args[0]) != 0:
            raise NotApplicable("the K loop does not start at 0")
        if len(args) == 3 and read_names(args[2]) == {tile}:
            return target.value
        if len(args) <= 2:
            return f"{target.value} * {tile}"
        raise NotApplicable(f"the K loop steps by `{code_of(args[2])}`, not by {tile}")
