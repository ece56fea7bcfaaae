"""Every LLM request goes through `LLMClient.call`: cache, budget, one HTTP request per attempt, a ledger.

(1) An answer already paid for (same model, settings and prompt) is replayed from the run store's
cache: that is what makes --resume free. (2) Each HTTP request is one `LLMCall` on the ledger, with
its tokens and its cost from LiteLLM's local cost map; a request that timed out is charged its prompt
(estimated), as the provider bills it. (3) A 429, a 5xx, a dropped connection are retried with
backoff, a timeout once, all inside a deadline of about two timeouts; a 400 "context length" returns
to the proposer, which shrinks its prompt; the rest end the run with one message naming the setting
to change (errors.py). (4) Every text that comes back is stripped of the API key before it is kept.
DSPy formats the signature into messages; the answer is read by answers.py, one request per call
(no adapter retry that would pay for the same answer twice).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

import dspy
from pydantic import BaseModel, Field

from xe_forge.config import Budget, Settings, strip_api_keys
from xe_forge.errors import InputError
from xe_forge.proposers.llm.errors import LLMFailure, Redactor, classify, fatal_error
from xe_forge.proposers.llm.profile import ModelProfile, profile_for
from xe_forge.store import LLMCache

BAD_REQUESTS_IN_A_ROW = 3  # a 400 for one prompt is that prompt's problem; three in a row is the setup's
BACKOFF_CAP = 60.0


class LLMCall(BaseModel):
    """One HTTP request (or one cache replay) on the ledger."""

    purpose: str
    stage: str | None
    model: str
    prompt_hash: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    seconds: float = 0.0
    cached: bool = False
    error: str | None = None
    finish_reason: str | None = None
    attempt: int = 1
    estimated: bool = Field(False, description="tokens estimated: the request got no answer (timed out)")
    retry_in: float | None = Field(None, description="seconds until the retry that follows this failure")


class LLMAnswer(BaseModel):
    """What one call produced: the raw answer (key-free), or why there is none."""

    prompt_hash: str
    text: str = ""
    finish_reason: str | None = None
    max_tokens: int | None = None
    error: str | None = None
    context_exceeded: bool = False
    budget_spent: bool = False


class Completion(BaseModel):
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None


class LLMClient:
    """One configured model (its profile), a cache of paid answers, a budget, and a ledger of requests."""

    def __init__(self, settings: Settings, *, lm: dspy.BaseLM | None = None, cache: LLMCache | None = None,
                 on_call: Callable[[LLMCall], None] | None = None, budget: Budget | None = None,
                 spent: tuple[float, int] = (0.0, 0)) -> None:
        settings, self.warnings = strip_api_keys(settings)
        self.settings = settings
        self.model = settings.model or "unconfigured"
        self.profile: ModelProfile = profile_for(settings)
        self.redact = Redactor(settings.secrets())
        self.lm = lm
        self.cache = cache
        self.on_call = on_call
        self.budget = budget
        self.spent_before = spent
        self.started = time.monotonic()
        self.calls: list[LLMCall] = []
        self._bad_requests = 0
        if budget is not None and budget.unit == "usd" and self.profile.input_cost is None:
            raise InputError(f"a dollar budget needs the prices of '{self.model}', which LiteLLM's local cost map "
                             "does not have", hint="give the budget in tokens (--budget '200k tokens') or time (45m)")

    # -- the one entry point ------------------------------------------------------------------------

    def call(self, signature: type[dspy.Signature], task: str, *, purpose: str, stage: str | None) -> LLMAnswer:
        messages = dspy.ChatAdapter().format(signature, demos=[], inputs={"task": task})
        settings_key = json.dumps(self.profile.params(self.profile.max_tokens), sort_keys=True)
        key = hashlib.sha256(f"{self.model}\n{signature.__name__}\n{settings_key}\n{task}".encode()).hexdigest()
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None and "text" in hit:
            self._record(LLMCall(purpose=purpose, stage=stage, model=self.model, prompt_hash=key, cached=True,
                                 finish_reason=hit.get("finish_reason")))
            return LLMAnswer(prompt_hash=key, text=hit["text"], finish_reason=hit.get("finish_reason"),
                             max_tokens=hit.get("max_tokens"))
        spent = self.budget_spent()
        if spent:
            return LLMAnswer(prompt_hash=key, error=spent, budget_spent=True)
        chars = sum(len(str(m.get("content", ""))) for m in messages)
        max_tokens = self.profile.answer_tokens(chars)
        if max_tokens is None:
            return LLMAnswer(prompt_hash=key, context_exceeded=True,
                             error=f"the prompt (~{chars // 4} tokens) leaves no room for an answer in the "
                                   f"{self.profile.context}-token context")
        base = LLMCall(purpose=purpose, stage=stage, model=self.model, prompt_hash=key)
        done = self.send(messages, self.profile.params(max_tokens), base)
        if isinstance(done, LLMFailure):
            if done.context_size:  # the server said how big its context is: fit the next prompts to it
                self.profile.context = min(done.context_size, self.profile.context or done.context_size)
            return LLMAnswer(prompt_hash=key, error=done.render(), context_exceeded=done.kind == "context",
                             max_tokens=max_tokens)
        if self.cache is not None:
            self.cache.put(key, {"text": done.text, "finish_reason": done.finish_reason, "max_tokens": max_tokens})
        return LLMAnswer(prompt_hash=key, text=done.text, finish_reason=done.finish_reason, max_tokens=max_tokens)

    # -- requests, retries, the ledger -----------------------------------------------------------------

    def send(self, messages: list[dict[str, Any]], params: dict[str, Any], base: LLMCall) -> Completion | LLMFailure:
        """Send, retrying what is transient, within about two timeouts; a failure the run survives is returned."""
        timeout = self.profile.timeout
        deadline = time.monotonic() + 2 * timeout + BACKOFF_CAP
        timeouts = 0
        for attempt in range(1, self.profile.retries + 2):
            started = time.monotonic()
            record = base.model_copy(update={"attempt": attempt})
            try:
                done = self._send(messages, params, min(timeout, max(1.0, deadline - started)))
            except Exception as exc:  # sorted below: nothing the endpoint does may end as a traceback
                failure = classify(exc, self.redact)
                timeouts += failure.kind == "timeout"
                wait = min(failure.retry_after or 2.0 ** attempt, BACKOFF_CAP)
                again = (failure.retryable and attempt <= self.profile.retries and timeouts <= 1
                         and time.monotonic() + wait < deadline)
                record.error = failure.render()
                record.retry_in = wait if again else None
                if failure.kind == "timeout":  # the provider bills the prompt it received
                    record.prompt_tokens, record.estimated = _estimate_tokens(self.model, messages), True
                    record.cost = self.profile.cost(record.prompt_tokens, 0)
                    record.error = f"no answer within {timeout:.0f} s (XE_FORGE_LLM_TIMEOUT)"
                self._finish(record, started)
                if again:
                    time.sleep(wait)
                    continue
                return self._give_up(failure, attempt)
            self._bad_requests = 0
            record.prompt_tokens, record.completion_tokens = done.prompt_tokens, done.completion_tokens
            record.cost, record.finish_reason = done.cost, done.finish_reason
            self._finish(record, started)
            return done
        raise AssertionError("unreachable: the last attempt returns")  # pragma: no cover

    def _give_up(self, failure: LLMFailure, attempts: int) -> LLMFailure:
        if failure.kind == "bad_request":
            self._bad_requests += 1
        if failure.kind in ("context", "bad_request") and self._bad_requests < BAD_REQUESTS_IN_A_ROW:
            return failure
        raise fatal_error(failure, model=self.model, api_base=self.settings.api_base,
                          key_source=self.settings.key_source(), timeout=self.profile.timeout, attempts=attempts)

    def _send(self, messages: list[dict[str, Any]], params: dict[str, Any], timeout: float) -> Completion:
        if self.lm is not None:
            return self._send_dspy(messages)
        import litellm

        response = litellm.completion(model=self.model, messages=messages, api_base=self.settings.api_base,
                                      timeout=timeout, num_retries=0, **_key_kwargs(self.settings), **params)
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        prompt, completion = int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0)
        return Completion(text=self.redact(choice.message.content or ""), finish_reason=choice.finish_reason,
                          prompt_tokens=prompt, completion_tokens=completion,
                          cost=_response_cost(response, self.profile, prompt, completion))

    def _send_dspy(self, messages: list[dict[str, Any]]) -> Completion:
        """A DSPy LM given by a test (DummyLM): its first output and the usage in its history."""
        outputs = self.lm(messages=messages)
        first = outputs[0] if outputs else ""
        text = first.get("text", "") if isinstance(first, dict) else str(first)
        usage = (self.lm.history[-1].get("usage") if self.lm.history else None) or {}
        prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        return Completion(text=self.redact(text), prompt_tokens=prompt, completion_tokens=completion,
                          cost=self.profile.cost(prompt, completion))

    def _finish(self, record: LLMCall, started: float) -> None:
        record.seconds = time.monotonic() - started
        self._record(record)

    def _record(self, record: LLMCall) -> None:
        self.calls.append(record)
        if self.on_call is not None:
            self.on_call(record)

    # -- money, tokens, time ----------------------------------------------------------------------------

    @property
    def tokens(self) -> int:
        return self.spent_before[1] + sum(c.prompt_tokens + c.completion_tokens for c in self.calls if not c.cached)

    @property
    def cost(self) -> float:
        return self.spent_before[0] + sum(c.cost or 0.0 for c in self.calls if not c.cached)

    def budget_spent(self) -> str | None:
        """Why no further request may be sent (the budget is spent), else None."""
        b = self.budget
        if b is None:
            return None
        used = {"usd": self.cost, "tokens": float(self.tokens), "seconds": time.monotonic() - self.started}[b.unit]
        return f"budget spent: {b.render(used)} of {b.render()}" if used >= b.amount else None


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


def _response_cost(response: Any, profile: ModelProfile, prompt: int, completion: int) -> float | None:
    """LiteLLM's price for this response (cached-prompt discounts, tiers), else the profile's per-token prices."""
    if profile.known:
        try:
            import litellm

            return float(litellm.completion_cost(completion_response=response))
        except Exception:  # a model LiteLLM maps without prices
            pass
    return profile.cost(prompt, completion)


def _estimate_tokens(model: str, messages: list[dict[str, Any]]) -> int:
    try:
        import litellm

        return int(litellm.token_counter(model=model, messages=messages))
    except Exception:
        return sum(len(str(m.get("content", ""))) for m in messages) // 4
