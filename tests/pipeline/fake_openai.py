"""A scripted OpenAI-compatible chat server on 127.0.0.1, for driving DSPy through the real HTTP path.

Tests script what the "model" answers (in order, or per substring of the prompt), then assert on
what it was asked: every request's body, headers and model are recorded. Answers are usually written
in DSPy's ChatAdapter format (`[[ ## field ## ]]` sections ending with `[[ ## completed ## ]]`), and
every response carries usage figures so token accounting is exercised. A `Reply` scripts what a
plain string cannot: an HTTP error (401, 429 with Retry-After, 400 context length), an answer cut at
the token limit, a slow or hanging answer; `{authorization}` in its text is replaced by the request's
Authorization header (a hostile endpoint echoing the key). `failing=True` answers HTTP 500 to
everything; `unused_port()` gives an address where nothing listens.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON_FALLBACK_MARKER = "Outputs will be a JSON object"


def chat_answer(**fields: Any) -> str:
    """One answer in ChatAdapter format; list/dict values are written as JSON, as DSPy expects."""
    parts = []
    for name, value in fields.items():
        text = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"[[ ## {name} ## ]]\n{text}")
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])


def code_answer(code: str, rationale: str = "fewer launches and fp32 accumulation: faster on the target") -> str:
    """An OptimizeStage/RefineStage answer holding `code` in a fenced block."""
    return chat_answer(code=f"```python\n{code.rstrip()}\n```", rationale=rationale)


def plan_answer(stages: list[str], rationale: str = "these stages have work to do") -> str:
    return chat_answer(plan=stages, rationale=rationale)


def issues_answer(issues: list[dict[str, Any]]) -> str:
    return chat_answer(issues=issues)


@dataclass
class Reply:
    """One scripted answer beyond a plain 200 'stop': an HTTP error, a cut-off answer, a slow one."""

    content: str = ""
    status: int = 200
    error: str = "scripted failure"
    error_type: str = "server_error"
    error_code: str | None = None
    finish_reason: str = "stop"
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens to report; default: characters / 4


def context_exceeded(limit: int = 4096) -> Reply:
    """What vLLM and OpenAI answer when prompt plus answer exceed the context."""
    return Reply(status=400, error_type="invalid_request_error", error_code="context_length_exceeded",
                 error=f"This model's maximum context length is {limit} tokens. However, you requested "
                       f"{limit + 3000} tokens. Please reduce the length of the messages or completion.")


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, read, released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Request:
    """One recorded chat request."""

    model: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    answer: str | None = None

    def header(self, name: str) -> str | None:
        """A request header, by case-insensitive name."""
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)

    @property
    def text(self) -> str:
        """All message contents joined: what assertions on the prompt look at."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def json_fallback(self) -> bool:
        """DSPy retries a ChatAdapter parse failure once with its JSONAdapter."""
        return "response_format" in self.body or JSON_FALLBACK_MARKER in self.text


@dataclass
class Route:
    """Answers, in order, for requests whose prompt contains `match`."""

    match: str
    answers: list[str | Reply]
    served: int = 0


@dataclass
class Script:
    """What the fake model says: routes first (by substring), then the ordered list, then `default`."""

    answers: list[str | Reply] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)
    default: str | Reply = "I am not sure what you mean."
    json_fallback: str = "not json either"

    def route(self, match: str, *answers: str | Reply) -> Script:
        self.routes.append(Route(match, list(answers)))
        return self

    def pick(self, request: Request) -> str | Reply:
        if request.json_fallback:
            return self.json_fallback
        for route in self.routes:
            if route.match in request.text:
                if route.served < len(route.answers):
                    route.served += 1
                    return route.answers[route.served - 1]
                return self.default
        return self.answers.pop(0) if self.answers else self.default


class FakeOpenAI:
    """`with FakeOpenAI(script) as server:` then point a model 'openai/<name>' at `server.api_base`."""

    def __init__(self, script: Script | None = None, *, failing: bool = False, delay: float = 0.0) -> None:
        self.script = script or Script()
        self.failing = failing
        self.delay = delay
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)  # a quick shutdown

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def requests_for(self, substring: str, *, include_fallback: bool = False) -> list[Request]:
        """Recorded requests whose prompt contains `substring` (JSON-fallback retries left out by default)."""
        return [r for r in self.requests if substring in r.text and (include_fallback or not r.json_fallback)]

    def _answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any], dict[str, str]]:
        request = Request(model=str(body.get("model", "")), messages=list(body.get("messages") or []), body=body,
                          headers=headers)
        with self._lock:
            self.requests.append(request)
            if self.failing:
                return 500, {"error": {"message": "scripted failure", "type": "server_error", "code": 500}}, {}
            picked = self.script.pick(request)
        reply = picked if isinstance(picked, Reply) else Reply(content=picked)
        auth = headers.get("Authorization", headers.get("authorization", ""))
        request.answer = reply.content.replace("{authorization}", auth)
        if self.delay or reply.delay:
            self._stopping.wait(self.delay + reply.delay)  # a hanging endpoint; ends when the server stops
        if reply.status != 200:
            error = {"message": reply.error.replace("{authorization}", auth), "type": reply.error_type,
                     "code": reply.error_code or reply.status}
            return reply.status, {"error": error}, reply.headers
        prompt_tokens, completion_tokens = reply.usage or (max(1, len(request.text) // 4),
                                                           max(1, len(request.answer) // 4))
        return 200, {
            "id": f"chatcmpl-fake-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": request.model,
            "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                         "message": {"role": "assistant", "content": request.answer}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }, reply.headers

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet test output
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout test)
                    pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                self._send(*server._answer(body, dict(self.headers.items())))

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

        return Handler
