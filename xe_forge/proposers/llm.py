"""The LLM proposer: DSPy signatures over any LiteLLM model, with accounting, caching and clean errors.

Every call goes through `LLMClient.call`, which (1) replays a cached answer recorded in the run store
when the same prompt was already paid for (that is what makes --resume free), (2) records tokens,
cost and time per call, and (3) turns an unreachable or failing endpoint into EnvError (exit 3).
A garbage answer (no code, truncated, prose) is not an error of the run: the attempt fails with a
reason and CoVeR moves on.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator

from xe_forge.config import Settings
from xe_forge.errors import EnvError
from xe_forge.pipeline.analyze import Issue
from xe_forge.prompting import render
from xe_forge.proposers.base import Proposal, StageRequest
from xe_forge.store import LLMCache

FATAL_ERRORS = ("APIConnectionError", "AuthenticationError", "NotFoundError", "ServiceUnavailableError",
                "InternalServerError", "Timeout", "PermissionDeniedError", "BadGatewayError",
                "RateLimitError", "APIError", "ConnectError", "ConnectionError",
                # dspy >= 3.4 talks HTTP itself (no LiteLLM) and raises its own classes
                "LMTransportError", "LMConfigurationError", "LMAuthError", "LMBillingError", "LMRateLimitError",
                "LMServerError", "LMTimeoutError", "LMUnsupportedModelError")


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


class LLMAnswer(BaseModel):
    """One answer: the signature's output fields (those it has), or why there are none.

    Optimize and refine fill `code` and `rationale`, analyze fills `issues`, plan fills `plan`;
    `prompt_hash` names the prompt (cache key, trajectory export) in every case.
    """

    model_config = ConfigDict(extra="ignore")

    prompt_hash: str
    error: str | None = Field(None, description="the call failed in a way that is not fatal to the run")
    code: str = ""
    rationale: str = ""
    issues: list[JsonValue] = Field(default_factory=list, description="checked one by one as Issue by the caller")
    plan: JsonValue = Field(None, description="a list of stage names, if the model gave one")

    @field_validator("code", "rationale", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return "" if value is None else str(value)


class LLMCall(BaseModel):
    purpose: str
    stage: str | None
    model: str
    prompt_hash: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    cached: bool = False
    error: str | None = None


def extract_code(text: str) -> str:
    """The Python inside a fenced block if there is one, else the text; stripped."""
    blocks = re.findall(r"```(?:python|py)?\s*\n(.*?)```", text or "", flags=re.S)
    if blocks:
        return max(blocks, key=len).strip() + "\n"
    # an opening fence never closed: a truncated answer; drop the fence so errors point at the real cut
    return re.sub(r"^\s*```(?:python|py)?[ \t]*\n", "", text or "").strip() + "\n"


class LLMClient:
    """One configured LM, a cache of paid answers, and a ledger of calls."""

    def __init__(self, settings: Settings, *, lm: dspy.BaseLM | None = None, cache: LLMCache | None = None,
                 on_call: Callable[[LLMCall], None] | None = None) -> None:
        self.model = settings.model or "unconfigured"
        self.lm = lm or dspy.LM(
            self.model, api_base=settings.api_base, **_key_kwargs(settings),
            timeout=settings.llm_timeout, num_retries=settings.llm_retries, max_tokens=settings.llm_max_tokens,
            temperature=settings.llm_temperature, cache=False,
        )
        self.cache = cache
        self.on_call = on_call
        self.calls: list[LLMCall] = []

    def call(self, signature: type[dspy.Signature], task: str, *, purpose: str, stage: str | None) -> LLMAnswer:
        key = hashlib.sha256(f"{self.model}\n{signature.__name__}\n{task}".encode()).hexdigest()
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self._record(LLMCall(purpose=purpose, stage=stage, model=self.model, prompt_hash=key, cached=True))
                return LLMAnswer(**hit, prompt_hash=key)  # the cache holds the output fields only
        started = time.monotonic()
        before = len(getattr(self.lm, "history", []) or [])
        record = LLMCall(purpose=purpose, stage=stage, model=self.model, prompt_hash=key)
        try:
            with dspy.context(lm=self.lm):
                prediction = dspy.Predict(signature)(task=task)
            outputs = {k: _jsonable(v) for k, v in prediction.items()}
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {str(exc)[:300]}"
            self._account(record, before, started)
            if _is_fatal(exc):
                raise EnvError(f"the LLM endpoint for model '{self.model}' is unreachable or failing: "
                               f"{type(exc).__name__}: {_first_line(exc)}",
                               hint="check --model, XE_FORGE_API_BASE and the key; `xe-forge doctor`") from None
            return LLMAnswer(prompt_hash=key, error=record.error)
        self._account(record, before, started)
        if self.cache is not None:
            self.cache.put(key, outputs)
        return LLMAnswer(**outputs, prompt_hash=key)

    def _account(self, record: LLMCall, before: int, started: float) -> None:
        record.seconds = time.monotonic() - started
        for entry in (getattr(self.lm, "history", []) or [])[before:]:
            usage = entry.get("usage") or {}
            record.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            record.completion_tokens += int(usage.get("completion_tokens") or 0)
            record.cost += float(entry.get("cost") or 0.0)
        self._record(record)

    def _record(self, record: LLMCall) -> None:
        self.calls.append(record)
        if self.on_call is not None:
            self.on_call(record)

    @property
    def tokens(self) -> int:
        return sum(c.prompt_tokens + c.completion_tokens for c in self.calls)


def _key_kwargs(settings: Settings) -> dict[str, str]:
    """The api_key argument, only when there is one to give.

    Passing api_key=None disables the providers' own variables (OPENAI_API_KEY...); a local
    OpenAI-compatible server (`xe-forge llm serve`) needs no key, but the client insists on one.
    """
    if settings.api_key is not None:
        return {"api_key": settings.api_key.get_secret_value()}
    if settings.api_base and settings.key_source() is None:
        return {"api_key": "no-key-needed"}
    return {}


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return json.loads(json.dumps(value, default=str))


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]


def _is_fatal(exc: Exception) -> bool:
    names = {c.__name__ for c in type(exc).__mro__}
    if names & set(FATAL_ERRORS):
        return True
    text = str(exc)
    return any(m in text for m in ("Connection refused", "ConnectError", "APIConnectionError",
                                   "InternalServerError", "ServiceUnavailable", "AuthenticationError"))


class LLMProposer:
    """CoVeR's generator in LLM mode: optimize on a fresh attempt, refine after a failure."""

    source = "llm"

    def __init__(self, client: LLMClient, allowance: str = "") -> None:
        self.client = client
        self.allowance = allowance

    def reset(self) -> None:
        pass

    def next(self, request: StageRequest) -> Proposal | None:
        task = render(request.stage.prompt, stage=request.stage, target=request.target,
                      toolchain=request.toolchain, context=request.context, issues=request.issues,
                      knowledge=request.knowledge, reference=request.reference, code=request.code,
                      attempts=request.attempts[:-1] if _last_failed(request) else request.attempts,
                      allowance=self.allowance, profile=request.profile)
        if _last_failed(request):
            last = request.attempts[-1]
            task = render("refine.j2", stage=request.stage, target=request.target, failure=last.feedback,
                          previous=last.code, task=task, profile=request.profile)
            out = self.client.call(RefineStage, task, purpose="refine", stage=request.stage.name)
        else:
            out = self.client.call(OptimizeStage, task, purpose="optimize", stage=request.stage.name)
        if out.error is not None:
            return Proposal(code="", recipe="llm", source="llm", prompt_hash=out.prompt_hash,
                            rationale=f"unusable LLM answer: {out.error}")
        return Proposal(code=extract_code(out.code), recipe="llm", source="llm", rationale=out.rationale.strip(),
                        expected_effect=out.rationale, prompt_hash=out.prompt_hash)

    def analyze(self, task: str) -> list[Issue]:
        out = self.client.call(AnalyzeKernel, task, purpose="analyze", stage=None)
        issues = []
        for item in out.issues:
            try:
                issues.append(Issue.model_validate(item))
            except ValidationError:  # one malformed issue does not spoil the rest
                continue
        return issues

    def plan(self, task: str) -> list[str] | None:
        out = self.client.call(PlanStages, task, purpose="plan", stage=None)
        return [str(s) for s in out.plan] if isinstance(out.plan, list) else None


def _last_failed(request: StageRequest) -> bool:
    return bool(request.attempts) and not request.attempts[-1].passed
