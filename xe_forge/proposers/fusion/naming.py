"""Names of the host-side values the generated forward computes: sizes, weights, buffers, statistics.

Kernels and the forward are written by different modules; both ask this one object, so a buffer is
allocated under exactly the name its launch passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xe_forge.proposers.fusion.ir import Graph

STAT_PARTS = {"sum": ["sum"], "max": ["max"], "min": ["min"], "lse": ["max", "sumexp"], "moments": ["sum", "m2"]}


def ident(text: str) -> str:
    """A Python identifier made from a node id or column space ('g0/16' -> 'g0_16', 'in:x' -> 'in_x')."""
    return re.sub(r"\W", "_", text)


@dataclass
class HostNames:
    graph: Graph

    def rows(self) -> str:
        return "M"

    def gemm_index(self, cols: str) -> int:
        return int(cols[1:])

    def count(self, cols: str) -> str:
        """Host expression for the number of columns of a column space."""
        if "/" in cols:
            base, _, factor = cols.rpartition("/")
            return f"({self.count(base)} // {factor})"
        if cols.startswith("in:"):
            return f"{cols[3:]}.shape[1]"
        return f"N{self.gemm_index(cols)}"

    def stored(self, node_id: str) -> str:
        return f"t_{ident(node_id)}"

    def stat(self, node_id: str, part: str) -> str:
        return f"st_{ident(node_id)}_{part}"

    def slots(self, node_id: str) -> str:
        return f"S_{ident(node_id)}"

    def slot_width(self, node_id: str) -> str:
        return f"SW_{ident(node_id)}"

    def group(self, node_id: str) -> str:
        return f"G_{ident(node_id)}"
