"""CoVeR for one stage: propose, verify, feed back, refine; keep the best verified candidate.

Acceptance is the stage's `accept` rule (stages/*.yaml). `faster`: on a GPU, a candidate replaces the
current best only when it is faster than it, timed interleaved in one worker, above max(2%, the
measured spread); on the CPU speed cannot be measured, so a correct candidate is kept when its
proposer predicts a gain for the target (a recipe's expected effect, the LLM's rationale), marked
"speed unverified". `correct`: the first correct candidate wins (the batch's port step).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from xe_forge.problem.kernel import Problem
from xe_forge.proposers.base import Attempt, Proposal, Proposer, StageRequest
from xe_forge.store import RunStore
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.models import Finding, Verdict


class CandidateRecord(BaseModel):
    iteration: int
    source: str
    recipe: str
    entry_id: str | None = None
    rationale: str = ""
    passed: bool
    accepted: bool
    speedup: float | None = None
    summary: str
    candidate_id: int | None = None


class StageReport(BaseModel):
    """What a stage did, as the reports and the run store show it."""

    stage: str
    improved: bool
    speedup: float | None = None  # measured only: never a number beside speed_verified false
    speed_verified: bool = False
    candidates: list[CandidateRecord] = Field(default_factory=list)
    note: str = ""


class StageOutcome(StageReport):
    """A stage's report and the code it hands to the next stage."""

    code: str

    def report(self) -> StageReport:
        return StageReport(**self.model_dump(exclude={"code"}))


OnCandidate = Callable[[CandidateRecord, Proposal, Verdict], int | None]


def recorder(store: RunStore, run_id: str, stage: str) -> OnCandidate:
    """The on_candidate callback that records each candidate and its verdict in the run store."""

    def record(rec: CandidateRecord, proposal: Proposal, verdict: Verdict) -> int:
        return store.add_candidate(run_id, stage, rec.iteration, code=proposal.code, source=proposal.source,
                                   recipe=proposal.recipe, entry_id=proposal.entry_id,
                                   prompt_hash=proposal.prompt_hash, rationale=proposal.rationale,
                                   verdict=verdict.model_dump(mode="json"), passed=verdict.passed,
                                   accepted=rec.accepted, speedup=rec.speedup)

    return record


def _no_code_verdict(proposal: Proposal) -> Verdict:
    reason = "the answer holds no kernel code"  # the rationale alone would read as if it were the verdict
    if proposal.rationale:
        reason += f" ({proposal.rationale.strip()[:400]})"
    return Verdict(passed=False, stage_failed="static",
                   findings=[Finding(check="no-code", message=reason,
                                     hint="return the complete kernel file as Python source")])


def run_stage(request: StageRequest, problem: Problem, proposers: list[Proposer], evaluator: Evaluator, *,
              allowance: set[str], max_iters: int, on_candidate: OnCandidate | None = None) -> StageOutcome:
    """The CoVeR loop of one stage; returns the best verified code (the input if nothing won)."""
    rule = request.stage.accept
    best_code, best_speedup, improved, verified = request.code, 1.0, False, False
    records: list[CandidateRecord] = []
    seen: set[str] = {request.code}
    for p in proposers:
        p.reset()
    queue = list(proposers)
    for iteration in range(1, max_iters + 1):
        proposal = _next_proposal(queue, request)
        if proposal is None:
            break
        if proposal.code.strip() and proposal.code in seen:
            continue  # an identical candidate was already judged
        seen.add(proposal.code)
        if not proposal.code.strip():
            verdict = _no_code_verdict(proposal)
        else:
            verdict = evaluator.evaluate(proposal.code, problem, allow_torch=allowance,
                                         baseline_source=best_code if rule == "faster" else None,
                                         time_it=rule == "faster", name=f"{request.stage.name}_{iteration}")
        accepted, speedup = _accept(verdict, proposal, rule, evaluator.measures_speed)
        record = CandidateRecord(iteration=iteration, source=proposal.source, recipe=proposal.recipe,
                                 entry_id=proposal.entry_id, rationale=proposal.rationale, passed=verdict.passed,
                                 accepted=accepted, speedup=speedup, summary=verdict.summary())
        if on_candidate is not None:
            record.candidate_id = on_candidate(record, proposal, verdict)
        records.append(record)
        request.attempts.append(Attempt(code=proposal.code, feedback=verdict.feedback(), passed=verdict.passed))
        request.iteration = iteration
        if accepted:
            best_code, improved = proposal.code, True
            best_speedup *= speedup or 1.0
            verified = evaluator.measures_speed and rule == "faster"
            request.code = best_code
            if not verified:
                break  # correct is enough, or nothing to compare further candidates against on the CPU
        elif verdict.passed and evaluator.measures_speed and proposal.source == "llm":
            break  # a verified LLM candidate with no gain above noise: stop early
    note = "" if improved or records else "no candidate proposed"
    return StageOutcome(stage=request.stage.name, code=best_code, improved=improved,
                        speedup=best_speedup if verified else None, speed_verified=verified, candidates=records,
                        note=note)


def _next_proposal(queue: list[Proposer], request: StageRequest) -> Proposal | None:
    while queue:
        proposal = queue[0].next(request)
        if proposal is not None:
            return proposal
        queue.pop(0)
    return None


def _accept(verdict: Verdict, proposal: Proposal, rule: str, measures_speed: bool) -> tuple[bool, float | None]:
    if not verdict.passed or rule == "correct":
        return verdict.passed, None
    if measures_speed:
        if verdict.timing is None:
            return False, None
        return verdict.timing.faster, verdict.timing.speedup
    predicted = bool((proposal.expected_effect or proposal.rationale).strip())
    return predicted, None
