"""An LLM endpoint that cannot be reached or keeps failing: exit 3, one clear message, no traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app

from .fake_openai import unused_port
from .helpers import KERNEL, store_rows

SECRET = "sk-test-never-print-this-7f3a"


def _invoke(tmp_path, api_base: str | None, model: str | None = "openai/fake"):
    env = {"XE_FORGE_LLM_RETRIES": "0", "XE_FORGE_LLM_TIMEOUT": "5", "XE_FORGE_API_KEY": SECRET,
           "COLUMNS": "500"}  # rich wraps at 80 columns when not on a terminal
    if model:
        env["XE_FORGE_MODEL"] = model
    if api_base:
        env["XE_FORGE_API_BASE"] = api_base
    return CliRunner().invoke(app, ["optimize", str(KERNEL), "--engine", "llm", "--device", "cpu",
                                    "--stages", "fusion", "--run-dir", str(tmp_path / "runs")], env=env)


@pytest.mark.parametrize("failing", [False, True], ids=["unreachable", "http-500"])
def test_failing_endpoint_exits_3_with_one_message(fake_llm, tmp_path, failing):
    server = fake_llm(failing=True) if failing else None
    api_base = server.api_base if server else f"http://127.0.0.1:{unused_port()}/v1"
    result = _invoke(tmp_path, api_base)

    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)  # a clean exit
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert "LLM endpoint for model 'openai/fake' is unreachable or failing" in errors[0]
    assert ("500" if failing else "Connection refused") in errors[0]
    assert SECRET not in result.output
    if server:
        assert len(server.requests) == 1  # XE_FORGE_LLM_RETRIES=0: asked once, then gave up
    (run_dir,) = (tmp_path / "runs").iterdir()
    (call,) = store_rows(run_dir, "llm_calls")  # the failed call is on the ledger, the key is not
    assert call["error"] and SECRET not in str(call)


def test_llm_engine_without_a_model_exits_3(tmp_path):
    result = _invoke(tmp_path, None, model=None)
    assert result.exit_code == 3
    assert "needs a model" in result.output and "Traceback" not in result.output
