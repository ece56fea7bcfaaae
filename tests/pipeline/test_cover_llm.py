"""CoVeR with a scripted LLM over the real HTTP path: refine from the verifier's feedback, survive garbage."""

from __future__ import annotations

import dspy
import pytest

from xe_forge.pipeline.analyze import analyze_source, stages_with_issues
from xe_forge.stages import load_stages, order_with_dependencies

from .fake_openai import Script, chat_answer, code_answer, issues_answer
from .helpers import KERNEL, candidate, candidates, in_markdown, llm_settings, report, run

FUSION = "## Stage: fusion"
NO_ISSUES = issues_answer([])


def test_accepted_on_the_third_answer_after_feedback(fake_llm, tmp_path, progress):
    """Does not run, then wrong, then right: each refine prompt carries the previous verdict."""
    server = fake_llm(Script().route("Analyze this Triton kernel", NO_ISSUES)
                      .route(FUSION, code_answer(candidate("fused_no_relu")), code_answer(candidate("fused_wrong")),
                             code_answer(candidate("fused_good"))))
    result = run(llm_settings(server), tmp_path, progress=progress, max_iters=4)

    assert result.exit_code == 0 and result.status.startswith("improved"), result.status
    rows = candidates(result.run_dir, "fusion")
    assert [(r["passed"], r["accepted"]) for r in rows] == [(0, 0), (0, 0), (1, 1)]
    first, second = rows[0]["verdict"], rows[1]["verdict"]
    assert "no attribute 'relu'" in first["findings"][0]["message"]
    assert second["stage_failed"] == "correctness"

    prompts = server.requests_for(FUSION)
    assert len(prompts) == 3  # accepted on the third: no fourth request
    assert "Rewrite a Triton kernel file" in prompts[0].text and "failed verification" not in prompts[0].text
    assert "failed verification" in prompts[1].text and "no attribute 'relu'" in prompts[1].text
    assert "FAILED at correctness" in prompts[2].text
    assert second["findings"][0]["message"] in prompts[2].text
    assert "tl.maximum(x * scale + b, 0.0)" in prompts[2].text  # the failing candidate is shown
    assert "_bias_scale_relu_kernel" in (tmp_path / "runs" / result.run_id / "output.py").read_text()
    assert "fusion iter 3 (llm:llm) accepted" in progress.text


def test_dummy_lm_path_accepts_after_refine(tmp_path):
    """The same loop with dspy's DummyLM passed as lm=: answers in order, no HTTP."""
    lm = dspy.utils.DummyLM([{"issues": []},
                             {"code": f"```python\n{candidate('fused_wrong')}```", "rationale": "one launch"},
                             {"code": f"```python\n{candidate('fused_good')}```", "rationale": "fixed the bias"}])
    result = run(llm_settings(), tmp_path, lm=lm, max_iters=3)
    assert result.exit_code == 0, result.status
    assert [(r["passed"], r["accepted"]) for r in candidates(result.run_dir)] == [(0, 0), (1, 1)]
    refine_prompt = lm.history[-1]["messages"][-1]["content"]
    assert "FAILED at correctness" in refine_prompt


_GOOD = candidate("fused_good")
TRUNCATED = _GOOD[:_GOOD.index("tl.maximum((x + b)") + 12]  # cut inside the kernel body, fence never closed
GARBAGE = [
    ("prose", "Sure! You should fuse the two kernels into one so the intermediate stays in registers."),
    ("no code", chat_answer(code="I fused the bias, the scale and the ReLU into a single pass.",
                            rationale="fewer launches")),
    ("empty code", chat_answer(code="", rationale="this will be much faster")),
    ("truncated", chat_answer(code=f"```python\n{TRUNCATED}", rationale="one launch")),
    ("torch hack", code_answer(candidate("torch_hack"))),
]


def test_garbage_answers_keep_the_input_and_the_run_completes(fake_llm, tmp_path):
    server = fake_llm(Script().route("Analyze this Triton kernel", NO_ISSUES)
                      .route(FUSION, *[answer for _, answer in GARBAGE]))
    result = run(llm_settings(server), tmp_path, max_iters=len(GARBAGE))

    assert result.exit_code == 1 and result.status == "no improvement"
    data, md = report(result.run_dir)
    (fusion,) = data["stages"]
    assert not fusion["improved"] and len(fusion["candidates"]) == len(GARBAGE)
    summaries = [c["summary"] for c in fusion["candidates"]]
    assert "no kernel code" in summaries[0] and "unusable LLM answer: AdapterParseError" in summaries[0]
    assert "syntax" in summaries[1]
    assert "no kernel code" in summaries[2]
    assert "syntax" in summaries[3] and "line 1)" not in summaries[3]  # points at the cut, not the fence
    assert "torch.relu" in summaries[4]
    for summary in summaries:
        assert in_markdown(summary, md)
    assert "```" not in md  # one line per candidate, whatever the model wrote
    assert (tmp_path / "runs" / result.run_id / "output.py").read_text() == KERNEL.read_text()
    assert data["llm"]["errors"] and data["llm"]["prompt_tokens"] > 0
    assert "## Stage: fusion" in server.requests[-1].text and len(server.requests_for(FUSION)) == len(GARBAGE)


def test_garbage_analysis_and_plan_fall_back_to_static(fake_llm, tmp_path):
    server = fake_llm(Script(default="no idea").route("Analyze this Triton kernel", "The kernel is great.")
                      .route("Choose which optimization stages", chat_answer(plan="all of them", rationale="?")))
    result = run(llm_settings(server), tmp_path, stages=None, max_iters=1)

    data, _ = report(result.run_dir)
    static = analyze_source(KERNEL.read_text())
    assert data["issues"] == [i.model_dump() for i in static]
    expected_plan = order_with_dependencies(stages_with_issues(static) + ["discovery"], load_stages())
    assert data["plan"] == expected_plan and "fusion" in expected_plan
    assert [s["stage"] for s in data["stages"]] == expected_plan
    assert len(server.requests_for("Analyze this Triton kernel")) == 1
    assert len(server.requests_for("Choose which optimization stages")) == 1


@pytest.mark.parametrize("answer", ["", "[[ ## code ## ]]\nimport torch\n"], ids=["empty", "no-completed-marker"])
def test_single_garbage_answer_with_dummy_lm(tmp_path, answer):
    """An LM that returns odd raw text (DummyLM cannot, so a tiny BaseLM stand-in): one reject, exit 1."""

    class RawLM(dspy.utils.DummyLM):
        def forward(self, prompt=None, messages=None, **kwargs):
            response = super().forward(prompt=prompt, messages=messages, **kwargs)
            response.choices[0].message.content = answer
            return response

    lm = RawLM([{"issues": []}] + [{"code": "x", "rationale": "y"}] * 4)
    result = run(llm_settings(), tmp_path, lm=lm, max_iters=1)
    assert result.exit_code == 1
    assert candidates(result.run_dir)[0]["passed"] == 0
