"""What the graph carries: the checkpointed run state, and the run-scoped context nodes read.

State holds only run data, as pydantic models, checkpointed after every node in SQLite; the
evaluator, proposers, store and progress display live in the RunContext, which is never checkpointed.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field

from xe_forge.pipeline.analyze import Issue
from xe_forge.pipeline.cover import StageOutcome
from xe_forge.pipeline.run_clock import RunClock
from xe_forge.verify.models import Timing, Verdict

if TYPE_CHECKING:  # run-time objects only; importing them here would load DSPy and the KB for every import
    from xe_forge.kb.loader import KnowledgeBase
    from xe_forge.pipeline.progress import Progress
    from xe_forge.problem.kernel import Problem
    from xe_forge.profile.session import ProfileSession
    from xe_forge.proposers.base import CandidateSource
    from xe_forge.proposers.llm import LLMProposer
    from xe_forge.proposers.rules.proposer import RulesProposer
    from xe_forge.stages import SourceName, StageSpec
    from xe_forge.store import RunStore
    from xe_forge.targets.base import Toolchain
    from xe_forge.verify.evaluate import Evaluator


class FinalCheck(BaseModel):
    """The end of the run: unseen shapes and the final timing of output against input."""

    verdict: Verdict
    changed: bool = Field(description="the output differs from the input")
    fell_back: bool = Field(False, description="the last stage's output failed; an earlier one (or the input) is the result")
    fell_back_to: str | None = Field(None, description="the stage whose kernel is the result after a fallback, "
                                                       "or 'input'")
    failure: str = Field("", description="why the last stage's output failed, after a fallback")
    versus: dict[str, Timing] = Field(default_factory=dict, description="the result (the input, when unchanged) "
                                      "vs eager PyTorch and torch.compile, and vs the Triton-only lowering "
                                      "('lowering') where the run made one; each timed interleaved (GPU)")
    versus_note: str = Field("", description="why the output was not timed against PyTorch, where it was tried")


class ForgeState(BaseModel):
    """The run's data; nodes return only the fields they change, lists marked with a reducer grow."""

    run_id: str
    input_code: str
    code: str
    baseline: Verdict | None = None
    issues: list[Issue] = Field(default_factory=list)
    plan: list[str] = Field(default_factory=list)
    done: Annotated[list[str], operator.add] = Field(default_factory=list)
    outcomes: Annotated[list[StageOutcome], operator.add] = Field(default_factory=list)
    final: FinalCheck | None = None
    status: str | None = None
    stopped: str | None = Field(None, description="why the remaining planned stages were skipped (budget spent)")


# Types a checkpoint may hold: read back from SQLite only if listed (no other class is ever imported).
BEST_SO_FAR = "best_so_far.py"  # in the run directory: the best kernel verified so far (nodes.keep_best)
CHECKPOINT_TYPES = (Verdict, Issue, StageOutcome, FinalCheck, ForgeState)


@dataclass
class RunContext:
    """Run-scoped objects the nodes use; never checkpointed."""

    run_id: str
    run_dir: Path
    problem: Problem
    evaluator: Evaluator
    stages: dict[str, StageSpec]
    allowance: set[str]
    target: str
    toolchain: Toolchain
    kb: KnowledgeBase
    store: RunStore
    progress: Progress
    rules: RulesProposer
    llm: LLMProposer | None = None
    max_iters: int = 4
    only_stages: list[str] | None = None
    kb_budget: int = 2500
    engine: str = "rules"
    clock: RunClock = field(default_factory=lambda: RunClock(None))  # the time budget (run_clock.py)
    profiler: ProfileSession | None = None  # `--profile`: the hooks in profile/session.py read it
    sources: dict[SourceName, CandidateSource] = field(default_factory=dict)  # what stages/*.yaml `sources:` name
