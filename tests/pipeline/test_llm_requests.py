"""What goes over the wire for each kind of model, and what it costs: asserted on the HTTP body the fake
server received, through LiteLLM's real request path."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.config import Settings
from xe_forge.errors import EnvError
from xe_forge.proposers.llm import LLMClient, OptimizeStage
from xe_forge.proposers.llm.profile import profile_for

from .fake_openai import Script, code_answer, issues_answer
from .helpers import KERNEL, candidate, llm_settings, store_rows


def _one_request(server, **settings):
    client = LLMClient(llm_settings(server, api_key="sk-wire-test", **{"llm_timeout": None, **settings}))
    client.call(OptimizeStage, "## Stage: fusion ...", purpose="optimize", stage="fusion")
    return server.requests[-1].body, client


@pytest.mark.parametrize("model", ["openai/gpt-5", "openai/o3-mini", "openai/gpt-5-mini"])
def test_a_reasoning_model_starts_with_no_temperature_and_room_to_think(fake_llm, model):
    body, client = _one_request(fake_llm(Script(default=code_answer("x = 1"))), model=model)
    assert "temperature" not in body  # OpenAI's reasoning models refuse anything but 1
    assert body["max_completion_tokens"] == 25000 and "max_tokens" not in body
    assert "reasoning_effort" not in body  # the model's own default unless asked
    assert client.profile.reasoning and client.profile.timeout == 600


def test_a_plain_model_gets_max_tokens_and_a_low_temperature(fake_llm):
    body, client = _one_request(fake_llm(Script(default=code_answer("x = 1"))), model="openai/gpt-4o")
    assert body["temperature"] == 0.2 and body["max_tokens"] == 8000 and "max_completion_tokens" not in body
    assert not client.profile.reasoning
    hosted = profile_for(Settings(_env_file=None, model="openai/gpt-4o"))  # 120 s hosted, 600 s on this machine
    assert (hosted.timeout, client.profile.timeout) == (120, 600)


def test_a_local_server_model_reads_max_tokens(fake_llm):
    """Servers that read only max_tokens (llama.cpp, older vLLM/Ollama) must get the limit under that name."""
    body, client = _one_request(fake_llm(Script(default=code_answer("x = 1"))), model="openai/my-local-model")
    assert body["max_tokens"] == 8000 and "max_completion_tokens" not in body and body["model"] == "my-local-model"
    assert client.calls[-1].cost == 0.0  # a server on this machine costs nothing
    assert client.profile.timeout == 600  # and may be a CPU


def test_settings_and_reasoning_effort_override_the_model_defaults(fake_llm):
    body, _ = _one_request(fake_llm(Script(default=code_answer("x = 1"))), model="openai/gpt-5",
                           llm_temperature=1.0, llm_max_tokens=40000, llm_reasoning_effort="high")
    assert body["temperature"] == 1.0 and body["max_completion_tokens"] == 40000
    assert body["reasoning_effort"] == "high"


def test_a_temperature_the_model_refuses_is_one_message_naming_the_setting(fake_llm):
    server = fake_llm(Script(default=code_answer("x = 1")))
    with pytest.raises(EnvError) as err:
        _one_request(server, model="openai/gpt-5", llm_temperature=0.2)
    assert "XE_FORGE_LLM_TEMPERATURE" in str(err.value) and "openai/gpt-5" in str(err.value)
    assert not server.requests  # refused before anything was sent


def test_cost_comes_from_the_local_cost_map(fake_llm):
    _, client = _one_request(fake_llm(Script(default=code_answer("x = 1"))), model="openai/gpt-5")
    call = client.calls[-1]
    p = profile_for(client.settings)
    assert p.input_cost and p.output_cost  # known prices, no network
    assert call.cost == pytest.approx(call.prompt_tokens * p.input_cost + call.completion_tokens * p.output_cost)
    assert client.cost == pytest.approx(call.cost)


def test_an_unknown_model_has_unknown_cost_not_zero(fake_llm):
    server = fake_llm(Script(default=code_answer("x = 1")))
    client = LLMClient(llm_settings(server, model="openai/fake", api_base=server.api_base.replace(
        "127.0.0.1", "localhost.invalid")))
    assert client.profile.input_cost is None and "unknown" in client.profile.prices()


def test_the_token_limit_is_fitted_to_a_small_context(fake_llm):
    body, _ = _one_request(fake_llm(Script(default=code_answer("x = 1"))), model="openai/small", llm_context=4096)
    assert 512 <= body["max_tokens"] < 4096 - 64


def test_reasoning_effort_flag_reaches_the_request_of_a_whole_run(fake_llm, tmp_path):
    server = fake_llm(Script().route("Analyze this Triton kernel", issues_answer([]))
                      .route("## Stage: fusion", code_answer(candidate("fused_good"))))
    env = {"XE_FORGE_MODEL": "openai/o3-mini", "XE_FORGE_API_BASE": server.api_base, "XE_FORGE_API_KEY": "sk-x-1",
           "XE_FORGE_LLM_RETRIES": "0", "COLUMNS": "300"}
    result = CliRunner().invoke(app, ["optimize", str(KERNEL), "--device", "cpu", "--stages", "fusion",
                                      "--max-iters", "1", "--reasoning-effort", "low", "--run-dir",
                                      str(tmp_path / "runs")], env=env)
    assert result.exit_code == 0, result.output
    assert all(r.body.get("reasoning_effort") == "low" and "temperature" not in r.body for r in server.requests)
    assert "reasoning model" in result.output and "LLM: 2 calls" in result.output and "$" in result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert all(c["cost"] and c["cost"] > 0 for c in store_rows(run_dir, "llm_calls"))
