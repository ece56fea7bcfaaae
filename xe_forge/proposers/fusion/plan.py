"""From the fusion graph to kernels: which values each launch computes, stores and reduces.

A value is available in registers inside one tile of one launch (a *phase*). Reductions whose extent
crosses tiles (a row sum over N tiles, a softmax, batch statistics over M) are *barriers*: the phase
computing their input writes per-tile partial statistics, and the values that depend on them are
computed in the next phase, which combines the partials first. The phases:

- `gemm`: one program per output tile of a GEMM; the epilogue runs on the fp32 accumulator;
- `tile`: one program per [BLOCK_M, BLOCK_N] tile of a stored full value (normalise and continue);
- `rows`: one program per block of rows, when only per-row values remain (a logsumexp output).

Full values a later phase reads are stored (fp32, or the activation dtype when they feed a GEMM);
per-row, per-column and scalar values are recomputed where they are used (they are cheap). Group
norms whose groups fit in a tile are computed in the tile (`in_tile_groups`); otherwise they are
barriers like the others. Pooling windows always fit in a tile.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xe_forge.proposers.fusion.ir import Graph, Node

ROW_STATS = {"sum": "sum", "mean": "sum", "max": "max", "min": "min", "logsumexp": "lse", "var": "moments",
             "std": "moments", "softmax": "lse", "log_softmax": "lse", "layer_norm": "moments"}
"""Barrier op -> how its per-tile partials combine."""
COMPOSITES = {"softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm"}
"""Barriers whose value also reads their input again (so that input is stored)."""


class PlanError(Exception):
    """The graph has a structure the generator does not emit; the message names it."""


@dataclass
class Stat:
    """A barrier statistic: partials written in `phase`, combined wherever `node` is used."""

    node: str
    family: str
    """'row' (over a whole row), 'group' (over a group of columns), 'col' (batch statistics over M)."""
    combine: str
    """'sum', 'max', 'min', 'lse' (running max and sum of exponentials) or 'moments' (sum and M2)."""
    source: str
    phase: int


@dataclass
class Phase:
    index: int
    kind: str
    domain: str
    """Column space one program's BLOCK_N columns index ('' for a rows phase)."""
    gemm: str | None = None
    nodes: list[str] = field(default_factory=list)
    """Full values computed here, in order (per-row/column/scalar values are computed on demand)."""
    loads: list[str] = field(default_factory=list)
    """Full values read from memory: stored by an earlier phase, or forward inputs."""
    stores: list[str] = field(default_factory=list)
    partials: list[Stat] = field(default_factory=list)
    output: bool = False
    """Whether this phase writes the forward's output."""


@dataclass
class Plan:
    graph: Graph
    phases: list[Phase]
    stats: dict[str, Stat]
    stored: dict[str, str]
    """Full value -> 'fp32' or 'act' (the input dtype, for values that feed a GEMM)."""
    in_tile_groups: bool

    def node(self, node_id: str) -> Node:
        return self.graph.node(node_id)


def is_barrier(node: Node, in_tile_groups: bool) -> bool:
    if node.op in ROW_STATS:
        return True
    if node.op == "group_norm":
        return not in_tile_groups
    return node.op == "batch_norm" and bool(node.attrs.get("training"))


def _stat(node: Node, phase: int) -> Stat:
    source = node.args[0].ref or ""
    if node.op == "group_norm":
        return Stat(node.id, "group", "moments", source, phase)
    if node.op == "batch_norm":
        return Stat(node.id, "col", "moments", source, phase)
    return Stat(node.id, "row", ROW_STATS[node.op], source, phase)


def build_plan(graph: Graph, *, in_tile_groups: bool) -> Plan:
    """Assign every full value to a phase; raise PlanError for structures the emitter cannot write."""
    level: dict[str, int] = {}
    stats: dict[str, Stat] = {}
    for node in graph.nodes:
        refs = [a.ref for a in node.args if a.ref]
        if node.op in ("input", "param"):
            level[node.id] = 0
        elif node.op == "gemm":
            source = graph.node(refs[0])
            level[node.id] = 0 if source.op == "input" else level[source.id] + 1
        elif is_barrier(node, in_tile_groups):
            source = graph.node(refs[0])
            if source.kind != "full":
                raise PlanError(f"`{node.op}` of a {source.kind} value")
            stats[node.id] = _stat(node, level[source.id])
            level[node.id] = level[source.id] + 1
        else:
            level[node.id] = max((level[r] for r in refs), default=0)
    phases = _phases(graph, level, stats)
    stored = _stored(graph, phases)
    for phase in phases:
        if phase.kind != "rows":
            phase.partials = [s for s in stats.values() if s.phase == phase.index]
            phase.stores = [n for n in phase.nodes if n in stored]
        phase.output = graph.output in phase.nodes or phase.kind == "rows"
    return Plan(graph, phases, stats, stored, in_tile_groups)


def _phases(graph: Graph, level: dict[str, int], stats: dict[str, Stat]) -> list[Phase]:
    phases: list[Phase] = []
    output = graph.node(graph.output)
    for index in range(max(level.values()) + 1):
        owned = [n for n in graph.nodes if level[n.id] == index and n.kind == "full" and n.op not in ("input", "param")]
        gemms = [n for n in owned if n.op == "gemm"]
        if len(gemms) > 1:
            raise PlanError(f"GEMMs {', '.join(g.id for g in gemms)} run at the same level; one GEMM per launch")
        if owned:
            operand = gemms[0].args[0].ref if gemms else None
            loads = sorted({a.ref for n in owned for a in n.args if a.ref and a.ref != operand
                            and graph.node(a.ref).kind == "full"
                            and (level[a.ref] < index or graph.node(a.ref).op == "input")})
            domain = gemms[0].cols if gemms else _domain(graph, loads, owned)
            for node in owned:
                if node.cols != domain and not node.cols.startswith(domain + "/"):
                    raise PlanError(f"`{node.id}` ({node.op}) lives in column space {node.cols}, but this launch "
                                    f"tiles {domain}")
            for ref in loads:
                if graph.node(ref).cols != domain:
                    raise PlanError(f"`{ref}` (column space {graph.node(ref).cols}) is read by a launch tiling "
                                    f"{domain}")
            phases.append(Phase(index, "gemm" if gemms else "tile", domain, gemms[0].id if gemms else None,
                                [n.id for n in owned], loads))
        elif any(s.phase == index for s in stats.values()):
            raise PlanError(f"level {index} reduces values no launch computes")
        if output.kind == "row" and level[output.id] == index:
            phases.append(Phase(index, "rows", ""))
    return phases


def _domain(graph: Graph, loads: list[str], owned: list[Node]) -> str:
    spaces = {graph.node(r).cols for r in loads}
    if len(spaces) == 1:
        return spaces.pop()
    if not spaces:
        raise PlanError(f"`{owned[0].id}` ({owned[0].op}) computes a full value from no stored value")
    raise PlanError(f"one launch would read column spaces {', '.join(sorted(spaces))}")


def _stored(graph: Graph, phases: list[Phase]) -> dict[str, str]:
    """Full values computed in one phase and read in a later one: fp32, or the input dtype for a GEMM operand."""
    stored: dict[str, str] = {}
    for phase in phases:
        stored |= {ref: "fp32" for ref in phase.loads if graph.node(ref).op != "input"}
    for phase in phases:
        operand = graph.node(graph.node(phase.gemm).args[0].ref or "") if phase.gemm else None
        if operand is not None and operand.op != "input":
            stored[operand.id] = "act"
    return stored
