"""The `lower` candidate source: TorchInductor's lowering of the reference as one more proposal.

Offered once per stage that declares it (stages/fusion.yaml `sources: [lower]`): a whole module that
races the seed's own line through the same verifier and the same acceptance rule. Where it cannot be
made (no GPU, no reference, a failed lowering or packaging) it offers nothing and keeps the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xe_forge.errors import EnvError
from xe_forge.problem.kernel import Problem
from xe_forge.proposers.base import CandidateSource, Proposal, StageRequest
from xe_forge.proposers.lower.budget import DEFAULT_BUDGET_S

if TYPE_CHECKING:
    from xe_forge.stages import SourceName
    from xe_forge.verify.evaluate import Evaluator

RATIONALE = ("TorchInductor's Triton-only lowering of the reference: GEMM/convolution templates with the "
             "epilogue, reductions and norms fused, launch configs autotuned on this GPU, serving the shapes it was "
             "lowered for; a general Triton path serves every other shape")


class LowerProposer:
    source = "lower"

    def __init__(self, problem: Problem, *, device: str = "auto", timeout: float = 1200.0,
                 budget: Callable[[float], float | None] | None = None) -> None:
        self.problem = problem
        self.device = device
        self.timeout = timeout
        self.budget = budget  # the run's clock: autotuning seconds for a lowering started now (None: no time)
        self.skip: str | None = None
        self._offered = False

    def reset(self) -> None:
        self._offered = False

    def available(self) -> bool:
        """Whether a lowering can be made here at all: a GPU and a PyTorch reference."""
        return self.device != "cpu" and not self.problem.reference_is_self

    def next(self, request: StageRequest) -> Proposal | None:
        if self._offered:
            return None
        self._offered = True
        code = self._candidate()
        if code is None:
            return None
        return Proposal(code=code, recipe="inductor-lowering", source="lower", rationale=RATIONALE,
                        expected_effect="fewer launches and autotuned tiles: the lowering fuses what eager runs apart")

    def _candidate(self) -> str | None:
        from xe_forge.proposers.lower.service import lower_problem, port_for

        if self.problem.reference_is_self:
            self.skip = "no PyTorch reference to lower (the kernel is its own reference)"
            return None
        budget_s = DEFAULT_BUDGET_S if self.budget is None else self.budget(DEFAULT_BUDGET_S)
        if budget_s is None:
            self.skip = "time budget: too little time left to lower the reference and check the port"
            return None
        try:
            lowering = lower_problem(self.problem, device=self.device, timeout=self.timeout, budget_s=budget_s)
        except EnvError as err:
            self.skip = err.message
            return None
        if not lowering.ok:
            self.skip = f"the lowering failed: {(lowering.error or '')[:300]}"
            return None
        packaged, why = port_for(self.problem, [lowering])
        if packaged is None:
            self.skip = f"cannot package the lowering: {why}"
            return None
        return packaged.source


def candidate_sources(problem: Problem, evaluator: Evaluator,
                      budget: Callable[[float], float | None] | None = None) -> dict[SourceName, CandidateSource]:
    """The named candidate sources a stage may declare (stages/*.yaml `sources:`), one per SourceName;
    `budget` (the run clock's `lowering_budget`) bounds the lowering's autotuning by the time the run has left."""
    return {"lower": LowerProposer(problem, device=evaluator.device.kind, timeout=max(evaluator.timeout, 600.0),
                                   budget=budget)}
