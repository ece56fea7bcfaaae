"""An LLM endpoint that cannot be reached, hangs, refuses the key, rate-limits or has a small context, met
through the real command line: one clear message naming what to change, the exact resume command, exit 3,
no traceback; what is transient is retried, a context overflow shrinks the prompt."""

from __future__ import annotations

import re
import time

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app

from .fake_openai import Reply, Script, code_answer, context_exceeded, issues_answer, unused_port
from .helpers import KERNEL, candidate, store_rows

SECRET = "sk-test-never-print-this-7f3a"
ANALYZE, FUSION = "Analyze this Triton kernel", "## Stage: fusion"
WORKING = Script().route(ANALYZE, issues_answer([])).route(FUSION, code_answer(candidate("fused_good")))


def _invoke(tmp_path, api_base: str | None, *extra: str, model: str | None = "openai/fake", **env_extra: str):
    env = {"XE_FORGE_LLM_RETRIES": "0", "XE_FORGE_LLM_TIMEOUT": "5", "XE_FORGE_API_KEY": SECRET,
           "COLUMNS": "500", **env_extra}  # rich wraps at 80 columns when not on a terminal
    if model:
        env["XE_FORGE_MODEL"] = model
    if api_base:
        env["XE_FORGE_API_BASE"] = api_base
    return CliRunner().invoke(app, ["optimize", str(KERNEL), "--engine", "llm", "--device", "cpu", "--stages",
                                    "fusion", "--max-iters", "1", "--run-dir", str(tmp_path / "runs"), *extra],
                              env=env)


def _one_error(result) -> str:
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit), result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert SECRET not in result.output
    return result.output


def _resume_line(output: str, tmp_path) -> str:
    match = re.search(r"continue with: (xe-forge optimize --resume \S+ --run-dir \S+)", output)
    assert match, output
    assert match.group(1).endswith(str(tmp_path / "runs"))
    return match.group(1)


@pytest.mark.parametrize(("failing", "says"), [(False, "cannot reach the LLM endpoint"), (True, "keeps failing")],
                         ids=["unreachable", "http-500"])
def test_failing_endpoint_exits_3_with_one_message_and_the_resume_command(fake_llm, tmp_path, failing, says):
    server = fake_llm(failing=True) if failing else None
    api_base = server.api_base if server else f"http://127.0.0.1:{unused_port()}/v1"
    result = _invoke(tmp_path, api_base)

    assert result.exit_code == 3, result.output
    output = _one_error(result)
    assert says in output and "'openai/fake'" in output
    assert ("500" if failing else "Connection refused") in output
    _resume_line(output, tmp_path)
    if server:
        assert len(server.requests) == 1  # XE_FORGE_LLM_RETRIES=0: asked once, then gave up
    (run_dir,) = (tmp_path / "runs").iterdir()
    (call,) = store_rows(run_dir, "llm_calls")  # the failed call is on the ledger, the key is not
    assert call["error"] and SECRET not in str(call)


def test_a_hanging_endpoint_gives_up_after_the_timeout_once_retried_and_says_which_setting(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(content="late", delay=60)))
    started = time.monotonic()
    result = _invoke(tmp_path, server.api_base, XE_FORGE_LLM_TIMEOUT="1", XE_FORGE_LLM_RETRIES="2")

    assert result.exit_code == 3 and time.monotonic() - started < 40
    output = _one_error(result)
    assert "no answer from the LLM endpoint" in output and "within 1 s" in output
    assert "XE_FORGE_LLM_TIMEOUT" in output and "dspy" not in output.lower()
    _resume_line(output, tmp_path)
    assert len(server.requests) == 2  # a timeout is retried once, not XE_FORGE_LLM_RETRIES times
    (run_dir,) = (tmp_path / "runs").iterdir()
    calls = store_rows(run_dir, "llm_calls")
    assert len(calls) == 2 and all(c["estimated"] and c["prompt_tokens"] > 0 for c in calls)  # billed prompts
    assert "retrying" in output


@pytest.mark.parametrize(("status", "says"), [(401, "rejected the API key"), (403, "no access to 'openai/fake'")])
def test_a_refused_key_is_named_as_such_and_never_printed(fake_llm, tmp_path, status, says):
    hostile = Reply(status=status, error="Incorrect API key provided: {authorization}", error_type="auth_error")
    server = fake_llm(Script(default=hostile))
    result = _invoke(tmp_path, server.api_base, XE_FORGE_LLM_RETRIES="3")

    assert result.exit_code == 3
    output = _one_error(result)
    assert says in output and "unreachable" not in output and "XE_FORGE_API_KEY" in output
    assert len(server.requests) == 1  # a bad key is not retried
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert not [p for p in run_dir.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def test_a_rate_limit_is_waited_out_then_the_run_continues(fake_llm, tmp_path):
    limited = Reply(status=429, error="Rate limit reached", error_type="rate_limit", headers={"Retry-After": "1"})
    server = fake_llm(Script().route(ANALYZE, limited, issues_answer([]))
                      .route(FUSION, code_answer(candidate("fused_good"))))
    result = _invoke(tmp_path, server.api_base, XE_FORGE_LLM_RETRIES="2")

    assert result.exit_code == 0, result.output
    assert "HTTP 429" in result.output and "retrying in 1 s" in result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    calls = store_rows(run_dir, "llm_calls")
    assert [(c["purpose"], c["attempt"], bool(c["error"])) for c in calls] == [
        ("analyze", 1, True), ("analyze", 2, False), ("optimize", 1, False)]  # every HTTP request on the ledger


def test_a_rate_limit_that_lasts_stops_the_run_and_resume_keeps_every_option(fake_llm, tmp_path):
    """Exit 3 with the resume command; the resume (no options repeated) finishes and writes -o."""
    limited = Reply(status=429, error="You exceeded your current quota", error_type="insufficient_quota")
    server = fake_llm(Script().route(ANALYZE, limited, issues_answer([]))
                      .route(FUSION, code_answer(candidate("fused_good"))))
    out = tmp_path / "best.py"
    first = _invoke(tmp_path, server.api_base, "-o", str(out), "--max-iters", "2")
    assert first.exit_code == 3
    output = _one_error(first)
    assert "rate limit or quota" in output and "quota" in output
    resume = _resume_line(output, tmp_path).split()[1:]  # what the user copies, minus the program name

    second = CliRunner().invoke(app, resume, env={"XE_FORGE_MODEL": "openai/fake",
                                                  "XE_FORGE_API_BASE": server.api_base, "COLUMNS": "500"})
    assert second.exit_code == 0, second.output
    assert out.is_file() and "_bias_scale_relu_kernel" in out.read_text()  # -o remembered
    assert "best verified kernel written to" in second.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert '"max_iters": 2' in (run_dir / "args.json").read_text()


def test_context_length_exceeded_shrinks_the_prompt_and_retries(fake_llm, tmp_path):
    server = fake_llm(Script().route(ANALYZE, issues_answer([]))
                      .route(FUSION, context_exceeded(4096), code_answer(candidate("fused_good"))))
    result = _invoke(tmp_path, server.api_base)

    assert result.exit_code == 0, result.output
    big, small = server.requests_for(FUSION)
    assert len(small.text) < len(big.text)
    assert small.text.count("\n### ") < big.text.count("\n### ")  # fewer knowledge-base entries
    assert small.body["max_tokens"] < 4096  # and an answer limit inside the context the server reported
    (run_dir,) = (tmp_path / "runs").iterdir()
    errors = [c["error"] for c in store_rows(run_dir, "llm_calls") if c["error"]]
    assert len(errors) == 1 and "maximum context length is 4096" in errors[0]


def test_bad_requests_in_a_row_stop_the_run(fake_llm, tmp_path):
    bad = Reply(status=400, error="Unrecognized request argument supplied: frobnicate", error_type="invalid_request")
    server = fake_llm(Script(default=bad))
    result = _invoke(tmp_path, server.api_base, "--max-iters", "4")
    assert result.exit_code == 3
    assert "Unrecognized request argument" in _one_error(result)
    assert len(server.requests) == 3


def test_llm_engine_without_a_model_exits_3(tmp_path):
    result = _invoke(tmp_path, None, model=None)
    assert result.exit_code == 3
    assert "needs a model" in result.output and "Traceback" not in result.output
