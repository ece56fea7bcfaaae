"""The fake server speaks what DSPy expects, and the client reads it over real HTTP: one request per call."""

from __future__ import annotations

import json

import dspy
import pytest
from dspy.adapters.chat_adapter import ChatAdapter

from xe_forge.config import Settings
from xe_forge.errors import EnvError
from xe_forge.pipeline.analyze import analyze_source
from xe_forge.proposers.llm import AnalyzeKernel, LLMClient, LLMProposer, OptimizeStage, PlanStages

from .fake_openai import Script, chat_answer, code_answer, issues_answer, plan_answer, unused_port
from .helpers import KERNEL, candidate, llm_settings

ISSUE = {"stage": "fusion", "kind": "unfused-epilogue", "line": 30, "evidence": "_relu_kernel[grid]",
         "description": "two launches"}


def test_answers_parse_with_dspy_chat_adapter():
    adapter = ChatAdapter()
    assert adapter.parse(AnalyzeKernel, issues_answer([ISSUE]))["issues"][0].kind == "unfused-epilogue"
    assert adapter.parse(PlanStages, plan_answer(["fusion", "autotuning"]))["plan"] == ["fusion", "autotuning"]
    parsed = adapter.parse(OptimizeStage, code_answer("x = 1"))
    assert parsed["code"].startswith("```python\nx = 1") and parsed["rationale"]


def test_real_http_path_records_prompts_tokens_and_key(fake_llm):
    server = fake_llm(Script().route("Analyze this Triton kernel", issues_answer([ISSUE]))
                      .route("Choose which optimization stages", plan_answer(["fusion"]))
                      .route("## Stage", code_answer(candidate("fused_good"))))
    calls = []
    client = LLMClient(llm_settings(server, api_key="sk-unit-test"), on_call=calls.append)
    proposer = LLMProposer(client)
    analysis = proposer.analyze("Analyze this Triton kernel ...")
    assert [(i.stage, i.kind) for i in analysis.issues] == [("fusion", "unfused-epilogue")] and not analysis.problem
    assert proposer.plan("Choose which optimization stages ...") == ["fusion"]
    out = client.call(OptimizeStage, "## Stage: fusion ...", purpose="optimize", stage="fusion")
    assert "_bias_scale_relu_kernel" in out.text and out.error is None and len(out.prompt_hash) == 64
    assert out.finish_reason == "stop"
    assert [r.model for r in server.requests] == ["fake"] * 3  # 'openai/' is the provider prefix
    assert all(r.header("authorization") == "Bearer sk-unit-test" for r in server.requests)
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 and not c.cached for c in calls)
    assert client.tokens == sum(c.prompt_tokens + c.completion_tokens for c in calls)


def test_garbage_analysis_and_plan_fall_back_to_nothing_with_one_request_each(fake_llm):
    """Prose, a malformed list and unknown stages: analyze gives no issues and says why, plan gives None."""
    server = fake_llm(Script(answers=["Your kernel looks fine to me!", chat_answer(issues="not a list"),
                                      "I would run fusion first.", chat_answer(plan="fusion, then tuning",
                                                                               rationale="x")]))
    proposer = LLMProposer(LLMClient(llm_settings(server)))
    for task in ("task one", "task two"):
        analysis = proposer.analyze(task)
        assert analysis.issues == [] and "no list of issues" in analysis.problem
    assert proposer.plan("task three") is None
    assert proposer.plan("task four") is None
    # no adapter retry: an unusable answer is paid for once
    assert len(server.requests) == 4 and not any(r.json_fallback for r in server.requests)
    assert analyze_source(KERNEL.read_text())  # the static issues the pipeline keeps in this case


def test_lists_are_read_from_json_anywhere_in_the_answer(fake_llm):
    """A model that ignores the field markers but writes the list as JSON (in a block or inline) is understood."""
    server = fake_llm(Script(answers=[f"Here you go:\n```json\n{{\"issues\": [{json.dumps(ISSUE)}]}}\n```",
                                      'Run these: ["fusion", "autotuning"] in that order.']))
    proposer = LLMProposer(LLMClient(llm_settings(server)))
    assert [i.kind for i in proposer.analyze("a").issues] == ["unfused-epilogue"]
    assert proposer.plan("b") == ["fusion", "autotuning"]


def test_no_key_for_a_local_endpoint(fake_llm):
    """A local OpenAI-compatible server needs no key: none configured must still reach it."""
    server = fake_llm(Script(answers=[plan_answer(["dtype"])]))
    assert LLMProposer(LLMClient(llm_settings(server))).plan("task") == ["dtype"]


@pytest.mark.parametrize(("mode", "says"), [("unreachable", "cannot reach the LLM endpoint"),
                                           ("http-500", "keeps failing"), ("timeout", "no answer from the LLM endpoint")])
def test_endpoint_failure_is_an_env_error_naming_what_to_change(fake_llm, mode, says):
    if mode == "unreachable":
        base = f"http://127.0.0.1:{unused_port()}/v1"
    else:
        base = fake_llm(failing=mode == "http-500", delay=3.0 if mode == "timeout" else 0.0).api_base
    client = LLMClient(Settings(_env_file=None, model="openai/fake", api_base=base, llm_retries=0, llm_timeout=1))
    with pytest.raises(EnvError) as err:
        client.call(OptimizeStage, "task", purpose="optimize", stage="fusion")
    assert says in err.value.message and "openai/fake" in err.value.message
    assert "dspy" not in str(err.value).lower() and "litellm" not in str(err.value).lower()
    hint = {"unreachable": "XE_FORGE_API_BASE", "http-500": "status", "timeout": "XE_FORGE_LLM_TIMEOUT"}[mode]
    assert hint in str(err.value)
    assert client.calls[-1].error  # the failed call is still on the ledger


def test_dummy_lm_answers_in_order():
    lm = dspy.utils.DummyLM([{"plan": ["fusion"], "rationale": "r"}])
    assert LLMProposer(LLMClient(llm_settings(), lm=lm)).plan("task") == ["fusion"]
