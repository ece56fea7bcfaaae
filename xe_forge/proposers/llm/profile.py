"""What one model is sent: temperature, token limit, timeout, reasoning effort; and what a call costs.

Chosen per model from LiteLLM's local model map (no network: LITELLM_LOCAL_MODEL_COST_MAP): a model
LiteLLM marks as reasoning (OpenAI's o-series and gpt-5, Claude, Gemini 2.5, DeepSeek-R1...) gets no
temperature (the provider's default; OpenAI's accept only 1) and room to think (OpenAI asks to reserve
at least 25,000 tokens for reasoning and output), a plain model 0.2 and 8000. A setting the user gave
always wins. LiteLLM turns `max_tokens` into the field each provider reads (`max_completion_tokens`
for OpenAI's reasoning models, `max_tokens` for everything else, which local servers read).
The limit is kept inside the model's output limit and, when the context window is known
(XE_FORGE_LLM_CONTEXT or the map), inside what the prompt leaves of it. The timeout is 120 s a
request, 600 s for a reasoning model or a server on this machine (a CPU takes minutes).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

from pydantic import BaseModel, Field

from xe_forge.config import Settings

PLAIN = {"temperature": 0.2, "max_tokens": 8000, "timeout": 120.0}
REASONING = {"temperature": None, "max_tokens": 25000, "timeout": 600.0}
LOCAL_TIMEOUT = 600.0  # a server on this machine may run on its CPU: minutes for a long prompt
MIN_ANSWER_TOKENS = 512  # below this no kernel file fits: shrink the prompt instead
CHARS_PER_TOKEN = 3.0  # code and markdown run 3-4 characters a token: the low end keeps the fit safe
# OpenAI families LiteLLM may not have mapped yet (dated or new releases); the "-chat" ones do not reason
_OPENAI_REASONING = re.compile(r"^(?:o[1-9](?:-[a-z]+)?(?:-\d{4}-\d{2}-\d{2})?|gpt-5(?:\.\d+)*(?!-chat)(?:-.*)?)$")
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


class ModelProfile(BaseModel):
    """The request settings of one model and where each came from (doctor prints them)."""

    model: str
    provider: str
    known: bool = Field(description="LiteLLM's local map has the model (limits and prices)")
    reasoning: bool
    temperature: float | None
    max_tokens: int
    timeout: float
    retries: int
    reasoning_effort: str | None = None
    context: int | None = Field(None, description="context window in tokens, if known")
    input_cost: float | None = Field(None, description="USD per prompt token; None: unknown")
    output_cost: float | None = Field(None, description="USD per completion token; None: unknown")
    notes: list[str] = Field(default_factory=list, description="where the values came from")

    def answer_tokens(self, prompt_chars: int) -> int | None:
        """The token limit for a prompt of this size: within the context, or None when it cannot fit."""
        if self.context is None:
            return self.max_tokens
        room = self.context - int(prompt_chars / CHARS_PER_TOKEN) - 64
        limit = min(self.max_tokens, room)
        return limit if limit >= min(MIN_ANSWER_TOKENS, self.max_tokens) else None

    def params(self, max_tokens: int) -> dict[str, Any]:
        """The request's generation parameters (LiteLLM maps the names per provider)."""
        out: dict[str, Any] = {"max_tokens": max_tokens}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        return out

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self.input_cost is None or self.output_cost is None:
            return None
        return prompt_tokens * self.input_cost + completion_tokens * self.output_cost

    def prices(self) -> str:
        if self.input_cost is None or self.output_cost is None:
            return "unknown (not in LiteLLM's local cost map)"
        return f"${self.input_cost * 1e6:.3g} / ${self.output_cost * 1e6:.3g} per million prompt / completion tokens"


def profile_for(settings: Settings) -> ModelProfile:
    """The profile of settings.model: LiteLLM's knowledge, then the user's settings on top."""
    import litellm

    litellm.suppress_debug_info = True  # its "Provider List: ..." banners go to stdout
    model = settings.model or "unconfigured"
    provider = _provider(model)
    info = _model_info(model)
    reasoning = _supports_reasoning(model, provider, info)
    defaults = REASONING if reasoning else PLAIN
    notes = [f"{'a reasoning' if reasoning else 'a plain'} model"
             + (" (LiteLLM's model map)" if info else " (not in LiteLLM's model map)")]
    max_tokens = settings.llm_max_tokens or defaults["max_tokens"]
    max_output = info.get("max_output_tokens") or info.get("max_tokens")
    if settings.llm_max_tokens is None and max_output and max_output < max_tokens:
        max_tokens = int(max_output)
        notes.append(f"token limit {max_tokens}: the model's output limit")
    context = settings.llm_context or info.get("max_input_tokens")
    local = urlparse(settings.api_base or "").hostname in _LOCAL_HOSTS
    input_cost, output_cost = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if local and (input_cost is None or output_cost is None):
        input_cost = output_cost = 0.0
        notes.append("cost $0: a server on this machine")
    temperature = settings.llm_temperature if settings.llm_temperature is not None else defaults["temperature"]
    return ModelProfile(model=model, provider=provider, known=bool(info), reasoning=reasoning,
                        temperature=temperature, max_tokens=max_tokens,
                        timeout=settings.llm_timeout or max(defaults["timeout"], LOCAL_TIMEOUT if local else 0.0),
                        retries=settings.llm_retries,
                        reasoning_effort=settings.llm_reasoning_effort, context=context,
                        input_cost=input_cost, output_cost=output_cost, notes=notes)


def _provider(model: str) -> str:
    import litellm

    try:
        return litellm.get_llm_provider(model)[1]
    except Exception:  # an id LiteLLM cannot route: the call will say so with the model's name
        return model.split("/", 1)[0] if "/" in model else "unknown"


def _model_info(model: str) -> dict[str, Any]:
    import litellm

    try:
        return dict(litellm.get_model_info(model))
    except Exception:  # not mapped: a local or custom model
        return {}


def _supports_reasoning(model: str, provider: str, info: dict[str, Any]) -> bool:
    """LiteLLM's flag; for an OpenAI id it has not mapped yet, the o-series and gpt-5 family names."""
    if info:
        return bool(info.get("supports_reasoning"))
    return provider in ("openai", "azure") and _OPENAI_REASONING.match(model.split("/")[-1].lower()) is not None
