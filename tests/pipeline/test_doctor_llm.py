"""`xe-forge doctor`'s LLM section: a key with stray whitespace, a reasoning model's settings, and a probe that
tells a rejected key from an endpoint that cannot be reached."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app

from .fake_openai import Reply, Script, unused_port

KEY = "sk-doctor-test-0a1b2c3d4e5f"


def _doctor(*args: str, **env: str) -> dict:
    result = CliRunner().invoke(app, ["doctor", "--json", *args], env={"COLUMNS": "300", **env})
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert KEY not in result.output
    return json.loads(result.stdout)["llm"]


def test_a_key_with_a_trailing_newline_is_reported_by_name():
    llm = _doctor(XE_FORGE_MODEL="openai/gpt-4o", OPENAI_API_KEY=KEY + "\n")
    assert llm["key_warnings"] == ["OPENAI_API_KEY had leading or trailing whitespace (a newline?); it was stripped"]
    assert llm["api_key"] == "OPENAI_API_KEY"


def test_a_reasoning_model_shows_the_settings_it_gets():
    llm = _doctor(XE_FORGE_MODEL="openai/o3-mini")
    assert llm["kind"] == "reasoning" and llm["temperature"].startswith("provider default")
    assert llm["max_tokens"] == 25000 and llm["timeout_s"] == 600 and "$" in llm["prices"]
    plain = _doctor(XE_FORGE_MODEL="openai/gpt-4o", XE_FORGE_LLM_MAX_TOKENS="3000")
    assert plain["kind"] == "plain" and plain["temperature"] == 0.2 and plain["max_tokens"] == 3000
    assert "not sent" in plain["probe"]  # nothing leaves the machine without --probe


@pytest.mark.parametrize(("reply", "says"), [
    (None, "ok: reachable, key accepted"),
    (Reply(status=401, error="Incorrect API key provided"), "rejected the API key"),
    (Reply(status=403, error="Project does not have access"), "has no access"),
    ("unreachable", "cannot reach the LLM endpoint"),
], ids=["ok", "401", "403", "unreachable"])
def test_the_probe_tells_a_bad_key_from_an_unreachable_endpoint(fake_llm, reply, says):
    if reply == "unreachable":
        base = f"http://127.0.0.1:{unused_port()}/v1"
    else:
        base = fake_llm(Script(default=reply or "OK")).api_base
    llm = _doctor("--probe", XE_FORGE_MODEL="openai/fake", XE_FORGE_API_BASE=base, XE_FORGE_API_KEY=KEY)
    assert says in llm["probe"], llm["probe"]
