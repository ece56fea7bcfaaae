"""What the graph carries: the checkpointed run state, and the run-scoped context nodes read.

State holds only run data (JSON-able, checkpointed after every node in SQLite); the evaluator,
proposers, store and progress display live in the RunContext, which is never checkpointed.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from xe_forge.problem.kernel import Problem
from xe_forge.stages import StageSpec
from xe_forge.verify.evaluate import Evaluator


class ForgeState(TypedDict, total=False):
    run_id: str
    input_code: str
    code: str
    baseline: dict[str, Any]
    issues: list[dict[str, Any]]
    plan: list[str]
    done: Annotated[list[str], operator.add]
    outcomes: Annotated[list[dict[str, Any]], operator.add]
    final: dict[str, Any]
    status: str


@dataclass
class RunContext:
    """Run-scoped objects the nodes use; never checkpointed."""

    run_id: str
    problem: Problem
    evaluator: Evaluator
    stages: dict[str, StageSpec]
    allowance: set[str]
    target: str
    toolchain: Any
    kb: Any
    rules: Any = None
    llm: Any = None
    store: Any = None
    progress: Any = None
    max_iters: int = 4
    only_stages: list[str] | None = None
    kb_budget: int = 2500
    engine: str = "rules"
    sources: dict[str, Any] = field(default_factory=dict)  # named candidate sources (stages/*.yaml `sources:`)
    extras: dict[str, Any] = field(default_factory=dict)
