"""Unseen shapes: sizes no proposer saw, chosen from the kernel and the reference, not from a recipe.

A kernel whose grid, masks, strides or loop bounds are fitted to the visible shape passes there and
fails where a dimension needs one more block, one more loop step, or a size its tiles do not divide.
So the sizes come from what the kernel launches with (`tiles`: the integer constexprs of its
launches, read by the harness, and the literal block sizes of its jit bodies) and from what the
reference accepts (probed on the meta device):
- every free dim, in one shape, past the largest tile the kernel uses that stays within the cost
  bound (a LayerNorm walking its row in 256-column blocks gets a width past 256), else past the
  next multiple of 128 (of a power of two near four times a small size);
- every free dim grown at once (a volume above the visible one);
- every free dim smaller, and, while the shape budget lasts, each dim larger with the others smaller;
- non-multiples everywhere (odd offsets), unless the spec declares `multiple_of` for that dim;
- one dim at 1 with the others visible (batch 1, for the first two free dims that accept it).
A dim is free when the reference accepts another value for it and that value changes the shape of
some input, parameter, buffer or output: nothing is frozen by its name. Hyperparameters that change
no tensor's shape (an axis, an epsilon) are reported frozen for that reason; sizes the reference
rejects are replaced by the next candidate; a dim with none is reported frozen.
Cost bound (the interpreter is slow; a GPU check must take seconds): a generated shape's tensors
(inputs, state, outputs) hold at most `growth(V)` times the visible shape's V elements (or MIN_BUDGET),
and where the probe counts the reference's FLOPs, it does at most `growth(V)` times the visible
shape's FLOPs (no floor: a convolution grown in every dim at once multiplies its FLOPs). growth is COST_CAP while the grown shape stays below LARGE_VOLUME elements and falls to
2 for shapes already that large: at a KernelBench shape (a 0.4 G-element convolution) every dim is far
past every tile, and 16 times its volume with a kernel size grown from 3 to 19 was 9 GB of output and
a PFLOP, a check of minutes for nothing a shape just past the visible one does not show. So a size is
"just past" a tile, never ten times the visible one; a crossing beyond the bound falls back to a
smaller tile.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

MAX_SHAPES = 6
MAX_UNIT = 2  # shapes with one dim at 1, the others visible (batch 1), beyond MAX_SHAPES
MAX_LARGE = 3  # "one dim far past the usual caps, the others smallest" shapes (of MAX_SHAPES)
LARGE_SIZES = (8192, 4096, 1024)  # the caps a capped single block assumes: a last (column) dim goes past the largest
LARGE_ROWS = (1024,)  # the cap a capped grid assumes: other dims (rows, programs: slow in the interpreter) go past it
LARGE_CAP = 1 << 16  # elements a large shape's tensors hold at most (the others shrunk): the interpreter is slow
MAX_ALIGN = 1024  # exact multiples of tiles up to this size (larger constexprs are sizes, not steps)
COST_CAP = 16  # a generated shape's tensors hold at most this many times the visible elements,
MIN_BUDGET = 1 << 16  # or this many, whichever is more (tiny visible shapes still grow several dims)
LARGE_VOLUME = 1 << 27  # past this many elements a shape grows by LARGE_GROWTH at most (growth())
LARGE_GROWTH = 2
MAX_TILE = 1 << 14  # larger "tiles" are sizes passed as constexprs, not blocks
ODD_OFFSETS = (3, 5, 7, 9, 13, 17, 1)
# where the reference needs aligned sizes (channels divisible by groups), after the odd ones
EVEN_OFFSETS = (8, 24, 40, 16, 48, 32, 64, 96)


class ShapeProbe(BaseModel):
    """What the reference does at some dims: the shapes of its tensors and how many elements they hold."""

    signature: tuple = ()
    volume: int = 0
    flops: float = 0.0  # the reference's FLOPs there (0: not counted, no FLOP bound)


def growth(volume: int) -> float:
    """How many times the visible shape's elements (and FLOPs) a generated shape may hold."""
    if volume <= 0:
        return float(COST_CAP)
    return max(min(float(COST_CAP), LARGE_VOLUME / volume), float(LARGE_GROWTH))


class Bound(BaseModel):
    """The cost bound of one plan: elements and (where counted) FLOPs a generated shape may reach."""

    volume: int
    flops: float = 0.0  # 0: no FLOP bound

    def admits(self, got: ShapeProbe) -> bool:
        return got.volume <= self.volume and (not self.flops or got.flops <= self.flops)


Probe = Callable[[dict[str, Any]], ShapeProbe | None]


class UnseenShape(BaseModel):
    name: str  # what the shape varies: "all larger", "H past tile 256", "W larger, others smaller"
    dims: dict[str, int | float]


class UnseenPlan(BaseModel):
    shapes: list[UnseenShape] = Field(default_factory=list)
    frozen: dict[str, str] = Field(default_factory=dict)  # dim -> why it was not varied
    tiles: list[int] = Field(default_factory=list)  # the kernel's tiles the plan crossed


def simple_probe(accepts: Callable[[dict[str, Any]], bool]) -> Probe:
    """A probe from a yes/no rule (tests): every change counts as a shape change, volume the dims' product."""
    def probe(dims: dict[str, Any]) -> ShapeProbe | None:
        if not accepts(dims):
            return None
        sizes = [v for v in dims.values() if isinstance(v, int) and not isinstance(v, bool)]
        return ShapeProbe(signature=tuple(sorted(dims.items())), volume=math.prod(sizes))

    return probe


def _tile(v: int) -> int:
    """The tile a recipe assumes: 128 for sizes >= 32, else a power of two near 4x the size."""
    if v >= 32:
        return 128
    t = 16
    while t < 4 * v:
        t *= 2
    return t


def _past(anchor: int, step: int | None) -> list[int]:
    """Sizes just past `anchor`: odd offsets, or multiples of a declared step that are not anchors."""
    if step:
        return [anchor + step * k for k in (1, 3, 5, 2)]
    return [anchor + o for o in ODD_OFFSETS + EVEN_OFFSETS]


def _ceil_to(v: int, m: int) -> int:
    return -(-v // m) * m


def bigger_candidates(v: int, tiles: list[int] = (), step: int | None = None) -> list[tuple[str, int]]:
    """(why, size) larger than v: just past the next multiple of each kernel tile (largest tile first),
    then past the recipe's tile, then just past v; non-multiples unless a step is declared."""
    out: list[tuple[str, int]] = []
    for tile in sorted({t for t in tiles if 1 < t <= MAX_TILE}, reverse=True):
        past = _past(_ceil_to(v + 1, tile), step)
        out += [(f"past tile {tile}", c) for c in past[:3] + past[len(ODD_OFFSETS):len(ODD_OFFSETS) + 2]]
    out += [("larger", c) for c in _past(_ceil_to(v + 1, _tile(v)), step)]
    # last resort, where the cost bound refuses every crossing of a whole tile (a KernelBench-sized shape):
    # one partial block more than the visible size has
    out += [("just past", v + (step or o)) for o in ODD_OFFSETS[:3]]
    seen, unique = set(), []
    for why, c in out:
        if c > v and c not in seen and (step is None or c % step == 0):
            seen.add(c)
            unique.append((why, c))
    return unique


def smaller_candidates(v: int, step: int | None = None) -> list[int]:
    if step:
        raw = [(v // 2) // step * step, v - step, (v // 4) // step * step, step]
    else:
        half = v // 2 // 8 * 8
        raw = [v // 2 | 1, (3 * v // 4) | 1, v - 2 if v % 2 else v - 1, v // 4 | 1, 1,
               half + 8 if half % 16 == 0 else half, half, v - 8, v // 2, v - 16, v // 4 // 8 * 8]
    out: list[int] = []
    for c in raw:
        if 1 <= c < v and c not in out:
            out.append(c)
    return out


class _Dim(BaseModel):
    name: str
    big: list[tuple[str, int]] = Field(default_factory=list)  # accepted larger sizes that change a shape
    over: list[tuple[str, int]] = Field(default_factory=list)  # the same, over the bound with the others visible
    small: int | None = None
    least: int | None = None  # the smallest accepted size (the others' size in a large shape)
    column: bool = False  # it sizes the last dim of some tensor (a row's width, walked by one program)


def plan_unseen(dims: dict[str, Any], probe: Probe, tiles: list[int] = (),
                steps: dict[str, int] | None = None, seed: int | None = None) -> UnseenPlan:
    """Shapes over `dims` that cross the kernel's tiles; `probe(dims)` is what the reference does there.
    With a `seed` (secret, drawn per evaluation) one more shape draws every free dim at random past its
    visible size up to its largest accepted one: a kernel exact only at the sizes an earlier run printed
    fails there."""
    steps = steps or {}
    plan = UnseenPlan(tiles=sorted({t for t in tiles if 1 < t <= MAX_TILE}))
    base = probe(dims) or ShapeProbe(volume=1)
    factor = growth(base.volume)
    # the element floor lets a tiny shape grow several dims; FLOPs, what makes a check slow (the interpreter
    # most of all), grow by the factor alone: a convolution grown in every dim at once multiplies them
    cap = Bound(volume=max(int(factor * base.volume), MIN_BUDGET), flops=factor * base.flops)
    free: list[_Dim] = []
    for name, value in dims.items():
        if isinstance(value, bool) or not isinstance(value, int):
            plan.frozen[name] = "not an integer size"
            continue
        if value < 1:
            plan.frozen[name] = "not a positive size"
            continue
        dim, accepted = _Dim(name=name), False
        for why, c in bigger_candidates(value, plan.tiles, steps.get(name)):
            got = probe({**dims, name: c})
            accepted = accepted or got is not None
            if got is not None and got.signature != base.signature:
                (dim.big if cap.admits(got) else dim.over).append((why, c))
                dim.column = dim.column or _moves_last(base, got)
        for c in smaller_candidates(value, steps.get(name)):
            got = probe({**dims, name: c})
            accepted = accepted or got is not None
            if got is not None and got.signature != base.signature:
                dim.small = dim.small or c
                dim.least = c if dim.least is None or c < dim.least else dim.least
        for c in () if steps.get(name) else (2, 3):  # a far shape's other dims: 2 or 3 where accepted, not 1 (a 1-element output is
            got = probe({**dims, name: c}) if c < value else None  # right by chance under ReLU)
            if got is not None and got.signature != base.signature:
                dim.least = c
                break
        if not dim.big and not dim.over and dim.small is None:
            plan.frozen[name] = ("changes no tensor's shape (a hyperparameter such as an axis)" if accepted
                                 else "the reference accepts no other value")
            continue
        free.append(dim)
    _shapes(plan, dims, free, probe, cap, steps)
    _unit_shapes(plan, dims, free, probe, base, steps)
    if seed is not None:
        _secret_shape(plan, dims, free, probe, cap, random.Random(seed), steps)
    bigger = {k for s in plan.shapes for k in s.dims if s.dims[k] > dims[k]}
    smaller = {k for s in plan.shapes for k in s.dims if s.dims[k] < dims[k]}
    for dim in free:
        options = {"larger": bool(dim.big or dim.over), "smaller": dim.small is not None}
        missing = [w for w, seen in (("larger", bigger), ("smaller", smaller)) if dim.name not in seen]
        why = {w: ("the size bound and the shape budget left it out" if options[w]
                   else "the reference accepts no such value") for w in missing}
        if len(missing) == 2:
            plan.frozen[dim.name] = f"never varied: {why['larger']}"
        elif missing:
            plan.frozen[dim.name] = f"never {missing[0]}: {why[missing[0]]}"
    return plan


def _shapes(plan: UnseenPlan, dims: dict[str, Any], free: list[_Dim], probe: Probe, cap: Bound,
            steps: dict[str, int]) -> None:
    def add(label: str, shape: dict[str, Any] | None) -> bool:
        if shape is not None and len(plan.shapes) < MAX_SHAPES and shape != dims \
                and all(s.dims != shape for s in plan.shapes):
            plan.shapes.append(UnseenShape(name=label, dims=shape))
            return True
        return False

    growing = [d for d in free if d.big]
    # every dim grown at once: each first to its smallest crossing (so that a tight bound, at a KernelBench
    # shape, still grows them all), then each in turn to the largest that keeps the whole within the bound
    joint = dict(dims)
    for d in growing:
        size = next((c for c in sorted(c for _, c in d.big) if _accepted(joint, {d.name: c}, probe, cap)), None)
        if size is not None:
            joint[d.name] = size
    for d in growing:
        size = next((c for _, c in d.big if c > joint[d.name] and _accepted(joint, {d.name: c}, probe, cap)), None)
        if size is not None:
            joint[d.name] = size
    add("all larger", joint)
    # every growing dim an exact multiple of the kernel's tiles (a K % BK == 0 fast path, a tail that
    # drops the last full block): odd sizes never run those branches
    aligned = _aligned(dims, growing, probe, cap, plan.tiles, steps)
    if aligned is not None:
        add(*aligned)
    smaller = {d.name: d.small for d in free if d.small is not None}
    if smaller:
        add("all smaller", _joint(dims, smaller, probe, None))

    def one_larger(d: _Dim) -> None:
        others = {k: v for k, v in smaller.items() if k != d.name}
        size = next((c for why, c in d.big if why == "larger"), d.big[0][1]) if d.big else min(c for _, c in d.over)
        add(f"{d.name} larger, others smaller", _joint(dims, {**others, d.name: size}, probe, cap))

    # a dim the joint shape could not grow (a kernel size that multiplies a convolution's FLOPs past what
    # the bound leaves) grows with the others smaller, before the far shapes take the budget
    for d in free:
        if joint[d.name] == dims[d.name] and (d.big or d.over):
            one_larger(d)
    # each dim once far past the usual caps (a grid capped at 1024 rows, a block capped at 4096 columns,
    # an error swallowed past 8192), the others at their smallest (at most MAX_LARGE dims)
    least = {d.name: d.least for d in free if d.least is not None}
    far: dict[str, int] = {}
    for d in sorted(free, key=lambda d: joint[d.name] != dims[d.name]):  # dims no shape grew yet first
        sizes = LARGE_SIZES if d.column else LARGE_ROWS
        found = _large(dims, d.name, least, probe, steps.get(d.name), sizes) if len(far) < MAX_LARGE else None
        if found is not None and add(*found):
            far[d.name] = found[1][d.name]
    # each dim past the largest kernel tile it can take alone, where no shape so far took it
    for d in growing:
        why, size = d.big[0]
        if why.startswith("past tile") and joint[d.name] != size and far.get(d.name, 0) <= size:
            add(f"{d.name} {why}", {**dims, d.name: size})
    # while the budget lasts: one dim larger, the others smaller (dims the joint shape left out first)
    for d in sorted([d for d in free if d.big or d.over], key=lambda d: joint[d.name] != dims[d.name]):
        one_larger(d)


def _unit_shapes(plan: UnseenPlan, dims: dict[str, Any], free: list[_Dim], probe: Probe, base: ShapeProbe,
                 steps: dict[str, int]) -> None:
    """Up to MAX_UNIT shapes with one dim at 1 and the others visible, beyond the shape budget: batch 1 is
    what inference serves, and a kernel may take another path there (a GEMV for one row) that no larger
    size runs (red team 8, a04; red team 7, a16). Never every dim at 1 (a one-element output is right by
    chance under a ReLU); never below the visible volume's cost, so cheap."""
    added = 0
    for d in free:
        if added == MAX_UNIT:
            return
        if dims[d.name] <= 1 or (steps.get(d.name) or 1) > 1:
            continue
        shape = {**dims, d.name: 1}
        got = probe(shape)
        if got is None or got.signature == base.signature or any(s.dims == shape for s in plan.shapes):
            continue
        plan.shapes.append(UnseenShape(name=f"{d.name} at 1", dims=shape))
        added += 1


def _alignments(tiles: list[int]) -> list[int]:
    """Steps to align every dim to, largest first: the lcm of the tiles up to each tile (16 and 64 where
    the kernel names none)."""
    kept = sorted(t for t in tiles if 1 < t <= MAX_ALIGN) or [16, 64]
    out: list[int] = []
    for i in range(len(kept), 0, -1):
        step = math.lcm(*kept[:i])
        if step <= MAX_ALIGN and step not in out:
            out.append(step)
    return out + ([16] if min(out or [MAX_ALIGN]) > 16 else [])  # a blocked loop's step is a power of two


def _aligned(dims: dict[str, Any], growing: list[_Dim], probe: Probe, cap: Bound, tiles: list[int],
             steps: dict[str, int]) -> tuple[str, dict[str, Any]] | None:
    """Growing dims at the next exact multiple of an alignment past their visible sizes, within the bound:
    the alignment and dims that score most (dims aligned x log2 of the alignment; the larger on a tie), so
    a row's width at a 256 block beats every dim at 16, and every dim at 16 one dim at 1024."""
    if not growing:
        return None
    best = None
    for step in _alignments(tiles):
        wanted = {d.name: _ceil_to(dims[d.name] + 1, math.lcm(step, steps.get(d.name) or 1)) for d in growing}
        shape = _joint(dims, wanted, probe, cap)
        if shape is None:
            continue
        hit = sum(shape[k] == v for k, v in wanted.items())
        score = hit * math.log2(step)
        if best is None or score > best[0]:
            best = (score, f"{'all ' if hit == len(wanted) else ''}multiples of {step}", shape)
    return None if best is None else best[1:]


def _moves_last(base: ShapeProbe, got: ShapeProbe) -> bool:
    """Whether the last dim of some input of two or more dims differs between two probes (the dim sizes a
    row's width; a vector's length, or an output's last dim, may be a count of rows or planes, one
    program each, as a row reduction's output or a pooled (batch, channels) output is)."""
    def shape(entry: Any) -> tuple:
        ok = isinstance(entry, tuple) and len(entry) == 2 and entry[0] == "in" and isinstance(entry[1], tuple) \
            and len(entry[1]) >= 2
        return entry[1] if ok else ()

    return any(shape(a) and shape(b) and shape(a)[-1] != shape(b)[-1]
               for a, b in zip(base.signature, got.signature, strict=False))


def _large(dims: dict[str, Any], name: str, least: dict[str, int], probe: Probe, step: int | None,
           sizes: tuple[int, ...]) -> tuple[str, dict[str, Any]] | None:
    """`name` just past the largest usual cap above its visible size that fits LARGE_CAP with the other
    dims at their smallest accepted sizes (non-multiples unless a step is declared)."""
    others = {k: v for k, v in least.items() if k != name}
    for cap_size in sizes:
        if cap_size <= dims[name]:
            return None
        size = _ceil_to(cap_size + 1, step) if step else cap_size + 9
        shape = _joint(dims, {**others, name: size}, probe, Bound(volume=LARGE_CAP))
        if shape is not None and shape[name] == size:
            return f"{name} past {cap_size}, others smallest", shape
    return None


def _secret_shape(plan: UnseenPlan, dims: dict[str, Any], free: list[_Dim], probe: Probe, cap: Bound,
                  rng: random.Random, steps: dict[str, int]) -> None:
    """Every free dim drawn uniformly past its visible size up to its largest accepted one (multiples of a
    declared step), within the bound; beyond the recipe's shape budget, and named for what it is."""
    for _ in range(8):  # a few draws: the reference or the bound may refuse one
        wanted = {}
        for d in free:
            hi = max([c for _, c in d.big] + [dims[d.name]])
            lo = min(dims[d.name] + 1, hi)  # past the visible size: as many elements as the visible shape, or more
            step = steps.get(d.name) or 1
            v = max(rng.randint(-(-lo // step), hi // step) * step, step)
            wanted[d.name] = v + 1 if step == 1 and v % 8 == 0 else v  # non-multiples unless a step is declared
        shape = _accepted(dims, wanted, probe, cap)
        if shape is not None and shape != dims and all(s.dims != shape for s in plan.shapes):
            plan.shapes.append(UnseenShape(name="drawn in secret", dims=shape))
            return


def _accepted(dims: dict[str, Any], wanted: dict[str, int], probe: Probe, cap: Bound | None) -> dict | None:
    full = {**dims, **wanted}
    got = probe(full)
    return full if got is not None and (cap is None or cap.admits(got)) else None


def _joint(dims: dict[str, Any], wanted: dict[str, int], probe: Probe, cap: Bound | None) -> dict | None:
    """All wanted changes at once if the reference accepts them within the bound, else as many as it
    accepts, in order; None when not even one is."""
    full = _accepted(dims, wanted, probe, cap)
    if full is not None:
        return full
    shape = dict(dims)
    for name, value in wanted.items():
        if _accepted(shape, {name: value}, probe, cap) is not None:
            shape[name] = value
    return shape if shape != dims else None
