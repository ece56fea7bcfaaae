"""CoVeR for one stage: propose, verify, feed back, refine; keep the best verified candidate.

Acceptance is the stage's `accept` rule (stages/*.yaml). `faster`: on a GPU, a candidate replaces the
current best only when it is faster than it, timed interleaved in one worker, above max(2%, the
measured spread); where speed is not measured (the CPU) a correct candidate is kept, and it is no
more than "verified correct, speed not measured". `correct`: the first correct candidate wins (the
batch's port step). A candidate about to be accepted is checked on the unseen shapes too, so a stage
never accepts what the final check would reject; the proposer then hears that it failed on hidden
shapes, never which. Each distinct candidate is judged once: one equal to the current kernel after
normalization (comments, whitespace) is no candidate, one equal to an earlier attempt is told so.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, Field

from xe_forge.pipeline.normalize import source_key
from xe_forge.pipeline.run_clock import RunClock
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
    seconds: float = 0.0  # verification wall time (and its unseen shapes): where a run's time went


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


_NUMBER = re.compile(r"\b\d+\b")
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


def _defect_verdict(proposal: Proposal) -> Verdict:
    """No code to verify: the proposal's own reason (a truncated answer...), else 'no kernel code'."""
    defect = proposal.defect
    message = defect.message if defect else "the answer holds no kernel code"
    if proposal.rationale and (defect is None or defect.check == "no-code"):
        message += f" ({proposal.rationale.strip()[:400]})"  # what the model said instead
    return _not_run(defect.check if defect else "no-code", message,
                    (defect.hint if defect else "") or "return the complete kernel file as Python source")


def _not_run(check: str, message: str, hint: str) -> Verdict:
    return Verdict(passed=False, stage_failed="static", findings=[Finding(check=check, message=message, hint=hint)])


def hidden_shapes_feedback(verdict: Verdict) -> str:
    """What a proposer hears of an unseen-shape failure: that it happened and its kind, never the sizes."""
    lines = ["verdict: FAILED on shapes that are not shown to you (hidden on purpose, so that no kernel is fitted "
             "to them); it passed the shapes in the prompt, so something size-specific breaks it: a hard-coded "
             "size, a missing mask, a grid or tile computed for one shape"]
    lines += [f"- [{f.check}] {_NUMBER.sub('N', f.message)}" for f in verdict.findings[:4]]
    return "\n".join(lines)


def run_stage(request: StageRequest, problem: Problem, proposers: list[Proposer], evaluator: Evaluator, *,
              allowance: set[str], max_iters: int, on_candidate: OnCandidate | None = None,
              on_accept: Callable[[str], None] | None = None, clock: RunClock | None = None) -> StageOutcome:
    """The CoVeR loop of one stage; returns the best verified code (the input if nothing won).
    `on_accept` gets each accepted candidate's code at once: a run killed later in the stage keeps it.
    `clock` (the run's time budget) is asked before each candidate and told what each one cost."""
    rule = request.stage.accept
    best_speedup, improved, verified = 1.0, False, False
    records: list[CandidateRecord] = []
    judged: dict[str, tuple[int, Verdict]] = {}  # normalized code -> the attempt judged with it, its verdict
    for p in proposers:
        p.reset()
    queue = list(proposers)
    stopped = ""
    for iteration in range(1, max_iters + 1):
        if clock is not None and (stopped := clock.candidate_stop() or ""):
            break
        proposal = _next_proposal(queue, request)
        if proposal is None:
            break
        name = f"{request.stage.name}_{iteration}"
        verdict, ran = _judge(proposal, request, judged, iteration, problem, evaluator, allowance, rule, name)
        accepted, speedup = _accept(verdict, rule, evaluator.measures_speed) if ran else (False, None)
        feedback = verdict.feedback()
        seconds = verdict.seconds if ran else 0.0
        if accepted:  # the unseen shapes now, not only at the end
            unseen = evaluator.evaluate(proposal.code, problem, allow_torch=allowance, unseen=True, time_it=False,
                                        name=f"{name}_unseen")
            seconds += unseen.seconds
            if not unseen.passed:
                accepted, speedup, verdict, feedback = False, None, unseen, hidden_shapes_feedback(unseen)
                judged[source_key(proposal.code)] = (iteration, unseen)  # a repeat hears it failed
        if accepted and on_accept is not None:
            on_accept(proposal.code)
        record = CandidateRecord(iteration=iteration, source=proposal.source, recipe=proposal.recipe,
                                 entry_id=proposal.entry_id, rationale=proposal.rationale, passed=verdict.passed,
                                 accepted=accepted, speedup=speedup, summary=verdict.summary(),
                                 seconds=round(seconds, 2))
        if clock is not None and ran:
            clock.saw_candidate(seconds)
        if on_candidate is not None:
            record.candidate_id = on_candidate(record, proposal, verdict)
        records.append(record)
        request.attempts.append(Attempt(code=proposal.code, feedback=feedback, passed=verdict.passed))
        request.iteration = iteration
        if accepted:
            request.code, improved = proposal.code, True
            best_speedup *= speedup or 1.0
            verified = evaluator.measures_speed and rule == "faster"
            if not verified:
                break  # correct is enough, or nothing to compare further candidates against on the CPU
        elif verdict.passed and evaluator.measures_speed and proposal.source == "llm":
            break  # a verified LLM candidate with no gain above noise: stop early
    note = stopped or ("" if improved or records else "no candidate proposed")
    return StageOutcome(stage=request.stage.name, code=request.code, improved=improved,
                        speedup=best_speedup if verified else None, speed_verified=verified, candidates=records,
                        note=note)


def _judge(proposal: Proposal, request: StageRequest, judged: dict[str, tuple[int, Verdict]], iteration: int,
           problem: Problem, evaluator: Evaluator, allowance: set[str], rule: str, name: str) -> tuple[Verdict, bool]:
    """The verdict on a proposal, and whether the candidate ran (no code, no change, a repeat: it did not)."""
    if not proposal.code.strip():
        return _defect_verdict(proposal), False
    key = source_key(proposal.code)
    if key == source_key(request.code):
        return _not_run("unchanged", "the candidate is the current kernel again (comments and whitespace aside): "
                        "nothing to verify", "change what the stage is about"), False
    if key in judged:
        first, earlier = judged[key]
        outcome = "passed" if earlier.passed else f"failed at {earlier.stage_failed}"
        return _not_run("duplicate", f"the same code as attempt {first} (comments and whitespace aside), already "
                        f"judged ({outcome}); not run again", "propose a different change"), False
    verdict = evaluator.evaluate(proposal.code, problem, allow_torch=allowance,
                                 baseline_source=request.code if rule == "faster" else None,
                                 time_it=rule == "faster", name=name)
    judged[key] = (iteration, verdict)
    return verdict, True


def _next_proposal(queue: list[Proposer], request: StageRequest) -> Proposal | None:
    while queue:
        proposal = queue[0].next(request)
        if proposal is not None:
            return proposal
        queue.pop(0)
    return None


def _accept(verdict: Verdict, rule: str, measures_speed: bool) -> tuple[bool, float | None]:
    """Correct where speed is not measured (reported so); faster than the current best where it is."""
    if not verdict.passed or rule == "correct" or not measures_speed:
        return verdict.passed, None
    if verdict.timing is None:
        return False, None
    return verdict.timing.faster, verdict.timing.speedup
