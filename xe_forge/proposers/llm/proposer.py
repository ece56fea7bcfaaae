"""The LLM proposer: CoVeR's generator in LLM mode, and the analysis and planning calls.

A fresh attempt renders the stage's prompt; after a failure the refine prompt carries the verifier's
findings (a truncated answer, a duplicate, an unseen-shape failure included). When the model's
context is too small for the prompt, the prompt is rendered again with fewer knowledge entries and
shorter feedback (SQUEEZE), and sent again.
"""

from __future__ import annotations

import dspy
from pydantic import BaseModel, ValidationError

from xe_forge.prompting import render
from xe_forge.proposers.base import Attempt, Defect, Issue, Proposal, StageRequest
from xe_forge.proposers.llm.answers import read_code_answer, read_json_list
from xe_forge.proposers.llm.client import LLMAnswer, LLMClient


class AnalyzeKernel(dspy.Signature):
    """List the performance issues of a Triton kernel on the target GPU, each tied to one optimization stage."""

    task: str = dspy.InputField(desc="kernel, reference, problem context, stage list and known issues")
    issues: list[Issue] = dspy.OutputField(desc="issues; `stage` must be one of the listed stage names")


class PlanStages(dspy.Signature):
    """Order the optimization stages to run for this kernel, skipping those with nothing to do."""

    task: str = dspy.InputField(desc="stages with summaries, hard dependencies, issues found")
    plan: list[str] = dspy.OutputField(desc="stage names in the order to run them")
    rationale: str = dspy.OutputField(desc="one or two sentences")


class OptimizeStage(dspy.Signature):
    """Rewrite a Triton kernel file to apply one optimization stage on the target GPU, staying correct."""

    task: str = dspy.InputField(desc="stage goal and rules, problem context, knowledge, reference, current kernel")
    code: str = dspy.OutputField(desc="the complete new kernel file, Python source only, no prose")
    rationale: str = dspy.OutputField(desc="why this is faster on the target, in one paragraph")


class RefineStage(dspy.Signature):
    """Fix a candidate kernel that failed verification, keeping the stage's optimization."""

    task: str = dspy.InputField(desc="the failure (error class, message, line), the failing code, the stage task")
    code: str = dspy.OutputField(desc="the complete corrected kernel file, Python source only, no prose")
    rationale: str = dspy.OutputField(desc="what was wrong and how it is fixed")


class Squeeze(BaseModel):
    """How much of a stage prompt is kept: knowledge entries, earlier attempts, characters of feedback."""

    entries: int | None
    attempts: int | None
    feedback_chars: int | None


# Full, then half the knowledge and the last two attempts, then none of it and the last attempt short.
SQUEEZE = (Squeeze(entries=None, attempts=None, feedback_chars=None),
           Squeeze(entries=2, attempts=2, feedback_chars=1500),
           Squeeze(entries=0, attempts=1, feedback_chars=600))


class Analysis(BaseModel):
    """The model's issues, and why there are none when its answer could not be used."""

    issues: list[Issue]
    problem: str | None = None


class LLMProposer:
    """Optimize on a fresh attempt, refine after a failure; None once the budget is spent."""

    source = "llm"

    def __init__(self, client: LLMClient, allowance: str = "") -> None:
        self.client = client
        self.allowance = allowance

    def reset(self) -> None:
        pass

    def next(self, request: StageRequest) -> Proposal | None:
        refine = _last_failed(request)
        signature, purpose = (RefineStage, "refine") if refine else (OptimizeStage, "optimize")
        out, sent = None, set()
        for squeeze in SQUEEZE:
            task = self._task(request, squeeze, refine)
            if task in sent:  # nothing left to cut at this level
                continue
            sent.add(task)
            out = self.client.call(signature, task, purpose=purpose, stage=request.stage.name)
            if not out.context_exceeded:
                break
        assert out is not None
        if out.budget_spent:
            return None  # nothing more from this proposer: the stage keeps its best
        if out.context_exceeded:
            return _defective(out, Defect(check="context", message="the prompt does not fit the model's context, "
                                          f"even without knowledge entries and with short feedback ({out.error})",
                                          hint="use a model with a larger context, or set XE_FORGE_LLM_CONTEXT"))
        if out.error is not None:
            return _defective(out, Defect(check="llm-error", message=f"the LLM request failed: {out.error}"))
        answer = read_code_answer(out.text, finish_reason=out.finish_reason, max_tokens=out.max_tokens)
        if answer.defect == "truncated":
            return _defective(out, Defect(check="truncated", message=answer.detail,
                                          hint="return only the complete kernel file, with a one-line rationale; "
                                               "no explanation before the code (the user can raise "
                                               "XE_FORGE_LLM_MAX_TOKENS)"), answer.rationale)
        if answer.defect == "no-code":
            return _defective(out, Defect(check="no-code", message=answer.detail,
                                          hint="return the complete kernel file as Python source in a code block"),
                              answer.rationale)
        return Proposal(code=answer.code, recipe="llm", source="llm", rationale=answer.rationale.strip(),
                        expected_effect=answer.rationale, prompt_hash=out.prompt_hash)

    def _task(self, request: StageRequest, squeeze: Squeeze, refine: bool) -> str:
        attempts = request.attempts[:-1] if refine else request.attempts
        if squeeze.attempts is not None:
            attempts = attempts[-squeeze.attempts:] if squeeze.attempts else []
        attempts = [_short(a, squeeze.feedback_chars) for a in attempts]
        knowledge = request.knowledge if squeeze.entries is None else request.knowledge[:squeeze.entries]
        task = render(request.stage.prompt, stage=request.stage, target=request.target, toolchain=request.toolchain,
                      context=request.context, issues=request.issues, knowledge="\n".join(knowledge),
                      reference=request.reference, code=request.code, attempts=attempts, allowance=self.allowance,
                      profile=request.profile)
        if not refine:
            return task
        last = _short(request.attempts[-1], squeeze.feedback_chars)
        return render("refine.j2", stage=request.stage, target=request.target, failure=last.feedback,
                      previous=last.code, task=task, profile=request.profile)

    def analyze(self, task: str) -> Analysis:
        out = self.client.call(AnalyzeKernel, task, purpose="analyze", stage=None)
        if out.error is not None:
            return Analysis(issues=[], problem=f"the analysis request failed: {out.error}")
        items = read_json_list(out.text, "issues")
        if items is None:
            return Analysis(issues=[], problem="the analysis answer holds no list of issues"
                                               + (" (cut off at the token limit)" if out.finish_reason == "length" else ""))
        issues = []
        for item in items:
            try:
                issues.append(Issue.model_validate(item))
            except ValidationError:  # one malformed issue does not spoil the rest
                continue
        dropped = len(items) - len(issues)
        return Analysis(issues=issues, problem=f"{dropped} malformed issue(s) dropped" if dropped else None)

    def plan(self, task: str) -> list[str] | None:
        out = self.client.call(PlanStages, task, purpose="plan", stage=None)
        items = read_json_list(out.text, "plan") if out.error is None else None
        return [str(s) for s in items] if items else None


def _defective(out: LLMAnswer, defect: Defect, rationale: str = "") -> Proposal:
    return Proposal(code="", recipe="llm", source="llm", prompt_hash=out.prompt_hash, rationale=rationale.strip(),
                    defect=defect)


def _short(attempt: Attempt, chars: int | None) -> Attempt:
    if chars is None or len(attempt.feedback) <= chars:
        return attempt
    return attempt.model_copy(update={"feedback": attempt.feedback[:chars] + " [...]"})


def _last_failed(request: StageRequest) -> bool:
    return bool(request.attempts) and not request.attempts[-1].passed
