"""A failed LLM request, sorted into what the user can act on, and every text from it made key-free.

The kinds decide what happens next (client.py): a 429, a 5xx, a dropped connection or a timeout is
retried; a 400 "context length exceeded" makes the proposer shrink its prompt; a bad key (401), a key
without access (403), an unknown model (404) or a parameter the model refuses end the run at once with
a message naming the setting to change, never the library that noticed.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from xe_forge.errors import EnvError, ForgeError

Kind = Literal["auth", "forbidden", "not_found", "params", "context", "rate_limit", "timeout", "unreachable",
               "server", "bad_request"]
RETRYABLE: tuple[Kind, ...] = ("rate_limit", "timeout", "unreachable", "server")
FATAL: tuple[Kind, ...] = ("auth", "forbidden", "not_found", "params")
_CONTEXT_MARKERS = ("context length", "context_length", "context window", "context size", "maximum context",
                    "too many tokens", "prompt is too long")
_CONTEXT_SIZE = re.compile(r"(?:maximum context length is|context (?:size|length|window)(?: of| is)?)\D{0,20}(\d{3,7})",
                           re.IGNORECASE)
_BEARER = re.compile(r"(?i)(bearer\s+)\S+")
_KEYLIKE = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{12,}")


class Redactor:
    """Removes the configured keys (and anything shaped like a bearer token) from a text."""

    def __init__(self, secrets: list[str]) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str | None) -> str:
        text = text or ""
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
            if secret.strip() != secret:
                text = text.replace(secret.strip(), "[redacted]")
        return _KEYLIKE.sub("[redacted]", _BEARER.sub(r"\1[redacted]", text))


class LLMFailure(BaseModel):
    """One failed request: its kind, HTTP status, the provider's first line (key-free), Retry-After."""

    kind: Kind
    status: int | None = None
    detail: str = ""
    retry_after: float | None = None
    context_size: int | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    def render(self) -> str:
        status = f"HTTP {self.status}" if self.status else self.kind.replace("_", " ")
        return f"{status}: {self.detail}" if self.detail else status


def classify(exc: BaseException, redact: Redactor) -> LLMFailure:
    """The kind of a LiteLLM / OpenAI / httpx exception, by class name and status (no import needed)."""
    names = {c.__name__ for c in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    text = redact(_provider_message(exc))
    lowered = text.lower()
    transport = _transport_cause(exc)  # LiteLLM reports a refused connection as a 500 "Connection error."
    kind: Kind
    if transport is not None:
        kind, status, text = ("timeout" if "Timeout" in type(transport).__name__ else "unreachable"), None, \
            redact(_provider_message(transport))
    elif "UnsupportedParamsError" in names:
        kind = "params"
    elif "ContextWindowExceededError" in names or (status in (400, 413) and any(m in lowered for m in _CONTEXT_MARKERS)):
        kind = "context"
    elif "AuthenticationError" in names or status == 401:
        kind = "auth"
    elif "PermissionDeniedError" in names or status == 403:
        kind = "forbidden"
    elif "RateLimitError" in names or status == 429:
        kind = "rate_limit"
    elif "Timeout" in names or "APITimeoutError" in names or "TimeoutException" in names or status == 408:
        kind = "timeout"
    elif "NotFoundError" in names or status == 404:
        kind = "not_found"
    elif status is not None and status >= 500:
        kind = "server"
    elif "BadRequestError" in names or status in (400, 413, 422):
        kind = "bad_request"
    else:  # connection refused, DNS, TLS, a protocol error: the endpoint was not reached
        kind = "unreachable"
    size = _CONTEXT_SIZE.search(text) if kind == "context" else None
    return LLMFailure(kind=kind, status=status, detail=text, retry_after=_retry_after(exc),
                      context_size=int(size.group(1)) if size else None)


def fatal_error(failure: LLMFailure, *, model: str, api_base: str | None, key_source: str | None,
                timeout: float, attempts: int) -> ForgeError:
    """The one message a user gets when the LLM cannot be used any more, naming what to change."""
    where = api_base or "the provider's default endpoint"
    key = key_source or "XE_FORGE_API_KEY (or the provider's variable)"
    if failure.kind == "auth":
        return EnvError(f"the LLM endpoint rejected the API key for '{model}' ({failure.render()})",
                        hint=f"check {key}; `xe-forge doctor --probe` tests it with one tiny request")
    if failure.kind == "forbidden":
        return EnvError(f"the API key has no access to '{model}' ({failure.render()})",
                        hint=f"use a model this key may call, or another key ({key})")
    if failure.kind == "not_found":
        return EnvError(f"the LLM endpoint {where} does not know model '{model}' ({failure.render()})",
                        hint="check --model / XE_FORGE_MODEL: provider/name as LiteLLM spells it (openai/gpt-4.1)")
    if failure.kind == "params":
        return EnvError(f"'{model}' refuses a request setting: {failure.detail}",
                          hint="unset XE_FORGE_LLM_TEMPERATURE / XE_FORGE_LLM_REASONING_EFFORT (each model then "
                               "gets what it accepts), see `xe-forge doctor`")
    if failure.kind == "timeout":
        return EnvError(f"no answer from the LLM endpoint for '{model}' within {timeout:.0f} s "
                        f"({attempts} request(s))",
                        hint=f"a slow model or a busy server: raise XE_FORGE_LLM_TIMEOUT (now {timeout:.0f} s)")
    if failure.kind == "rate_limit":
        return EnvError(f"the LLM endpoint kept refusing with a rate limit or quota for '{model}' after "
                        f"{attempts} request(s) ({failure.render()})",
                        hint="wait for the limit to reset (or check the account's quota), then resume")
    if failure.kind == "unreachable":
        return EnvError(f"cannot reach the LLM endpoint {where} for '{model}' ({failure.detail or 'no detail'})",
                        hint="check XE_FORGE_API_BASE and that the server is running; `xe-forge doctor --probe`")
    return EnvError(f"the LLM endpoint {where} keeps failing for '{model}' after {attempts} request(s) "
                    f"({failure.render()})", hint="check the provider's status, then resume")


def _transport_cause(exc: BaseException) -> BaseException | None:
    """The connection-level error under a wrapped one (httpx ConnectError, ConnectTimeout, OSError), if any."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        name = type(cause).__name__
        if name in ("ConnectError", "ConnectTimeout", "ConnectionRefusedError", "ConnectionResetError",
                    "RemoteProtocolError", "LocalProtocolError", "ReadError", "gaierror"):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def _provider_message(exc: BaseException) -> str:
    """The provider's own words, first line, without LiteLLM's 'litellm.XError: XException - ' prefixes."""
    text = str(getattr(exc, "message", None) or exc).strip()
    text = re.sub(r"^(?:litellm\.)?\w+(?:Error|Exception|Timeout)?:\s*", "", text)
    text = re.sub(r"^\w+Exception\s*-\s*", "", text)
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first.strip()[:300]


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
