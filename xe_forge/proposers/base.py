"""What a proposer is given and what it returns: the boundary between CoVeR and its generators."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

from xe_forge.stages import StageSpec


class Issue(BaseModel):
    """Something the analysis found in the kernel, and the stage that serves it; proposers hear the
    issues of their stage (the pipeline's analysis finds them: pipeline/analyze.py)."""

    kind: str
    stage: str
    line: int | None = None
    evidence: str = ""
    description: str = ""

    def render(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"[{self.stage}/{self.kind}] {where}{self.description}" + (f" (`{self.evidence}`)" if self.evidence else "")


class Defect(BaseModel):
    """Why a proposal holds no code to verify (a truncated answer, none at all); CoVeR reports it as the
    verdict's finding, so the refine step hears it like any other failure."""

    check: str = Field(description="'no-code', 'truncated', 'context', 'llm-error'")
    message: str
    hint: str = ""


class Proposal(BaseModel):
    """One candidate kernel file, with where it came from and why it should be faster."""

    code: str
    recipe: str
    entry_id: str | None = None
    rationale: str = ""
    expected_effect: str = ""
    source: Literal["rules", "llm", "lower"] = "rules"
    prompt_hash: str | None = None
    defect: Defect | None = Field(None, description="set when `code` is empty: why")


class Attempt(BaseModel):
    """A previous attempt in this stage and what the verifier said about it."""

    code: str
    feedback: str
    passed: bool


class StageRequest(BaseModel):
    stage: StageSpec
    code: str
    reference: str
    issues: list[Issue] = Field(default_factory=list)
    knowledge: list[str] = Field(default_factory=list, description="rendered knowledge-base entries, best first")
    context: str = ""
    target: str = "intel-xe2"
    toolchain: str = ""
    attempts: list[Attempt] = Field(default_factory=list)
    iteration: int = 0
    profile: str = ""  # the profiler's feedback on the current best kernel (optimize --profile)


class Proposer(Protocol):
    """Returns the next candidate for a stage, or None when it has nothing (more) to offer."""

    def next(self, request: StageRequest) -> Proposal | None: ...

    def reset(self) -> None: ...


class CandidateSource(Proposer, Protocol):
    """A proposer a stage declares by name (stages/*.yaml `sources:`): it may be unavailable here (no GPU),
    and when it offers nothing it says why in `skip`, which the stage's note repeats."""

    source: str
    skip: str | None

    def available(self) -> bool: ...
