"""`xe-forge doctor`'s LLM section: the settings each model gets, keys with stray whitespace, and one
tiny request that tells a rejected key (401/403) from an endpoint that cannot be reached."""

from __future__ import annotations

import time

from xe_forge.config import Settings, strip_api_keys

PROBE_TIMEOUT = 20.0
PROBE_MESSAGES = [{"role": "user", "content": "Reply with the word OK."}]


def describe(settings: Settings) -> dict[str, object]:
    """Model, endpoint, key source (never the key), and the request settings chosen for the model."""
    settings, warnings = strip_api_keys(settings)
    out: dict[str, object] = {"model": settings.model or "not configured (rules engine is the default)",
                              "api_base": settings.api_base or "provider default",
                              "api_key": settings.key_source() or "none set"}
    if warnings:
        out["key_warnings"] = warnings
    if not settings.model:
        return out
    from xe_forge.proposers.llm.profile import profile_for

    p = profile_for(settings)
    out.update({"kind": ("reasoning" if p.reasoning else "plain") + ("" if p.known else " (not in LiteLLM's map)"),
                "temperature": "provider default (not sent)" if p.temperature is None else p.temperature,
                "max_tokens": p.max_tokens, "reasoning_effort": p.reasoning_effort or "the model's default",
                "timeout_s": p.timeout, "retries": p.retries, "context": p.context or "unknown",
                "prices": p.prices()})
    return out


def probe(settings: Settings) -> str:
    """One request of a few tokens to the configured endpoint; what it says about the key and the address."""
    from xe_forge.errors import ForgeError
    from xe_forge.proposers.llm.client import LLMCall, LLMClient
    from xe_forge.proposers.llm.errors import LLMFailure

    client = LLMClient(settings.model_copy(update={"llm_retries": 0}))
    client.profile.timeout = min(client.profile.timeout, PROBE_TIMEOUT)
    call = LLMCall(purpose="probe", stage=None, model=client.model, prompt_hash="probe")
    started = time.monotonic()
    try:
        done = client.send(PROBE_MESSAGES, client.profile.params(16), call)
    except ForgeError as err:  # a rejected key, no access, unknown model, a timeout, unreachable: the message says
        return f"failed: {err.message}"
    if isinstance(done, LLMFailure):  # a 400 comes after the key was accepted
        return f"reachable, key accepted; the endpoint refused the probe itself ({done.render()})"
    return f"ok: reachable, key accepted, answered in {time.monotonic() - started:.1f} s"
