"""CoVeR with a scripted LLM over the real HTTP path: refine from the verifier's feedback, survive garbage,
judge each distinct candidate once, and check the unseen shapes when a candidate is accepted."""

from __future__ import annotations

import re

import dspy
import pytest

from xe_forge.pipeline.analyze import analyze_source, stages_with_issues
from xe_forge.stages import load_stages, order_with_dependencies

from .fake_openai import Reply, Script, chat_answer, code_answer, issues_answer
from .helpers import KERNEL, candidate, candidates, in_markdown, llm_settings, report, run

FUSION = "## Stage: fusion"
NO_ISSUES = issues_answer([])
UNSEEN_DIMS = ("'ROWS': 5", "'COLS': 20", "ROWS=5", "COLS=20", "5, 20", "[5,", "(5,")  # spec.yaml's unseen entry


def test_accepted_on_the_third_answer_after_feedback(fake_llm, tmp_path, progress):
    """Does not run, then wrong, then right: each refine prompt carries the previous verdict."""
    server = fake_llm(Script().route("Analyze this Triton kernel", NO_ISSUES)
                      .route(FUSION, code_answer(candidate("fused_no_relu")), code_answer(candidate("fused_wrong")),
                             code_answer(candidate("fused_good"))))
    result = run(llm_settings(server), tmp_path, progress=progress, max_iters=4)

    assert result.exit_code == 0 and result.status == "verified correct, speed not measured", result.status
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
    ("prose as code", chat_answer(code="I fused the bias, the scale and the ReLU into a single pass.",
                                  rationale="fewer launches")),
    ("empty code", chat_answer(code="", rationale="this will be much faster")),
    ("truncated", chat_answer(code=f"```python\n{TRUNCATED}", rationale="one launch")),
    ("broken python", code_answer(_GOOD.replace("def forward(self, x: torch.Tensor)", "def forward(self, x:"))),
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
    assert "[no-code]" in summaries[0] and "Sure! You should fuse" in summaries[0]  # what it said instead
    assert "[no-code]" in summaries[1] and "[no-code]" in summaries[2]
    assert "[truncated]" in summaries[3] and "cut off" in summaries[3]
    assert "syntax" in summaries[4].lower() and "line 1)" not in summaries[4]  # points at the broken line
    assert "torch.relu" in summaries[5]
    for summary in summaries:
        assert in_markdown(summary, md)
    assert "```" not in md  # one line per candidate, whatever the model wrote
    assert (tmp_path / "runs" / result.run_id / "output.py").read_text() == KERNEL.read_text()
    assert data["llm"]["prompt_tokens"] > 0 and not data["llm"]["errors"]  # unusable answers are not HTTP errors
    assert len(server.requests_for(FUSION)) == len(GARBAGE)  # one request each: no adapter retry
    truncated_refine = server.requests_for(FUSION)[4].text
    assert "cut off" in truncated_refine and "return only the complete kernel file" in truncated_refine


ANSWER_SHAPES = {
    "plain fenced block, no field markers": f"```python\n{_GOOD}```",
    "no fence at all": _GOOD,
    "prose before and after": f"Here is the fused kernel.\n\n```python\n{_GOOD}```\n\nIt saves one launch.",
    "markers, no rationale": f"[[ ## code ## ]]\n```python\n{_GOOD}```\n[[ ## completed ## ]]",
    "the input first, then the answer": f"Before:\n```python\n{KERNEL.read_text()}```\nAfter:\n```python\n{_GOOD}```",
    "cut in the rationale, code complete": Reply(content=f"[[ ## code ## ]]\n```python\n{_GOOD}```\n"
                                                         "[[ ## rationale ## ]]\nOne launch inst", finish_reason="length"),
}


@pytest.mark.parametrize("answer", list(ANSWER_SHAPES.values()), ids=list(ANSWER_SHAPES))
def test_any_answer_holding_one_complete_kernel_is_a_candidate(fake_llm, tmp_path, answer):
    server = fake_llm(Script().route("Analyze this Triton kernel", NO_ISSUES).route(FUSION, answer))
    result = run(llm_settings(server), tmp_path, max_iters=1)
    assert result.exit_code == 0, result.status
    assert "_bias_scale_relu_kernel" in (tmp_path / "runs" / result.run_id / "output.py").read_text()


def test_a_cut_off_answer_is_reported_as_truncated_and_refine_is_told(fake_llm, tmp_path):
    cut = Reply(content=f"Let me explain first. ```python\n{TRUNCATED}", finish_reason="length")
    server = fake_llm(Script().route("Analyze this Triton kernel", NO_ISSUES)
                      .route(FUSION, cut, code_answer(_GOOD)))
    result = run(llm_settings(server, llm_max_tokens=900), tmp_path, max_iters=2)

    assert result.exit_code == 0
    first = candidates(result.run_dir, "fusion")[0]["verdict"]["findings"][0]
    assert first["check"] == "truncated" and "token limit (900 tokens)" in first["message"]
    refine = server.requests_for(FUSION)[1].text
    assert "token limit (900 tokens)" in refine and "return only the complete kernel file" in refine
    assert server.requests_for(FUSION)[0].body["max_tokens"] == 900


def test_duplicates_and_unchanged_candidates_are_not_run_and_the_model_is_told(fake_llm, tmp_path, monkeypatch):
    import xe_forge.verify.evaluate as evaluate

    runs: list[str] = []
    real = evaluate.Evaluator.evaluate
    monkeypatch.setattr(evaluate.Evaluator, "evaluate", lambda self, source, *a, **k: (runs.append(k.get("name")),
                                                                                        real(self, source, *a, **k))[1])
    commented = KERNEL.read_text().replace("def forward", "# two launches on purpose\n    def forward")
    wrong = candidate("fused_wrong")
    wrong_again = "# same code, new comments\n" + re.sub(r"  # .*", "", wrong).replace("\n\n\n", "\n\n")
    server = fake_llm(Script().route("Analyze this Triton kernel", NO_ISSUES)
                      .route(FUSION, code_answer(commented), code_answer(wrong), code_answer(wrong_again),
                             code_answer(_GOOD)))
    result = run(llm_settings(server), tmp_path, max_iters=4)

    assert result.exit_code == 0
    rows = candidates(result.run_dir, "fusion")
    checks = [r["verdict"]["findings"][0]["check"] if r["verdict"]["findings"] else "passed" for r in rows]
    assert checks[0] == "unchanged" and checks[2] == "duplicate" and checks[3] == "passed"
    assert runs.count("fusion_1") == 0 and runs.count("fusion_3") == 0  # neither went to the worker
    prompts = server.requests_for(FUSION)
    assert "the current kernel again" in prompts[1].text
    assert "the same code as attempt 2" in prompts[3].text


def test_a_hard_coded_candidate_is_rejected_in_its_stage_on_hidden_shapes(fake_llm, tmp_path):
    """Sized for the benchmark: it passes the shapes in the prompt, fails the unseen ones at acceptance, and the
    refine prompt says so without naming them; the next, general candidate wins."""
    hardcoded = code_answer(candidate("fused_hardcoded"))
    server = fake_llm(Script().route("Analyze this Triton kernel", NO_ISSUES)
                      .route(FUSION, hardcoded, hardcoded, code_answer(_GOOD)))
    result = run(llm_settings(server), tmp_path, max_iters=3)

    assert result.exit_code == 0, result.status
    rows = candidates(result.run_dir, "fusion")
    assert [(r["passed"], r["accepted"]) for r in rows] == [(0, 0), (0, 0), (1, 1)]
    assert rows[0]["verdict"]["stage_failed"] == "unseen"
    refine = server.requests_for(FUSION)[1].text
    assert "not shown to you" in refine and "hard-coded size" in refine
    assert "already judged (failed at unseen)" in server.requests_for(FUSION)[2].text  # the repeat is told
    for request in server.requests:
        assert not any(d in request.text for d in UNSEEN_DIMS), "an unseen shape reached the model"
    data, _ = report(result.run_dir)
    assert data["final"]["passed"] and not data["final"]["fell_back"]


def test_garbage_analysis_and_plan_fall_back_to_static(fake_llm, tmp_path, progress):
    server = fake_llm(Script(default="no idea").route("Analyze this Triton kernel", "The kernel is great.")
                      .route("Choose which optimization stages", chat_answer(plan="all of them", rationale="?")))
    result = run(llm_settings(server), tmp_path, stages=None, max_iters=1, progress=progress)

    data, _ = report(result.run_dir)
    static = analyze_source(KERNEL.read_text())
    assert data["issues"] == [i.model_dump() for i in static]
    expected_plan = order_with_dependencies(stages_with_issues(static) + ["discovery"], load_stages())
    assert data["plan"] == expected_plan and "fusion" in expected_plan
    assert [s["stage"] for s in data["stages"]] == expected_plan
    assert len(server.requests_for("Analyze this Triton kernel")) == 1
    assert len(server.requests_for("Choose which optimization stages")) == 1
    assert "the LLM's analysis: the analysis answer holds no list of issues" in progress.text


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
