"""Fixtures of the pipeline suite: a hermetic environment, fake LLM servers, a recording progress display."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator

import pytest
from rich.console import Console

from xe_forge.pipeline.progress import Progress

from .fake_openai import FakeOpenAI, Script


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's XE_FORGE_* and provider keys must not steer these tests."""
    for name in list(os.environ):
        if name.startswith("XE_FORGE_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def fake_llm() -> Iterator[Callable[..., FakeOpenAI]]:
    """Start scripted servers: `server = fake_llm(Script(...))`; all are stopped after the test."""
    servers: list[FakeOpenAI] = []

    def start(script: Script | None = None, **kwargs: object) -> FakeOpenAI:
        server = FakeOpenAI(script, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


class RecordingProgress(Progress):
    """The real progress display, printing into a string the test can read."""

    def __init__(self) -> None:
        super().__init__(Console(file=io.StringIO(), width=240, color_system=None))

    @property
    def text(self) -> str:
        return self.console.file.getvalue()


@pytest.fixture
def progress() -> RecordingProgress:
    return RecordingProgress()
