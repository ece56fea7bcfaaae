"""The final check failing costs no earlier win: the latest stage kernel that passes it is the result, the
input only when none does (and then the report says speed is not applicable, not 'unverified')."""

from __future__ import annotations

import pytest

import xe_forge.verify.evaluate as evaluate
from xe_forge.verify.models import Finding, Verdict

from .fake_openai import Script, code_answer, issues_answer
from .helpers import KERNEL, candidate, llm_settings, report, run

GOOD = candidate("fused_good")
GOOD_SMALL_BLOCKS = GOOD.replace("BLOCK_SIZE=256", "BLOCK_SIZE=128").replace("triton.cdiv(n, 256)", "triton.cdiv(n, 128)")


@pytest.fixture
def final_fails_for(monkeypatch):
    """The final check fails for any code containing one of the given markers (a flaky or late failure)."""
    markers: list[str] = []
    real = evaluate.Evaluator.evaluate

    def fake(self, source, problem, **kwargs):
        if kwargs.get("name") == "final" and any(m in source for m in markers):
            return Verdict(passed=False, stage_failed="unseen",
                           findings=[Finding(check="correctness", message="mismatch on a late shape")])
        return real(self, source, problem, **kwargs)

    monkeypatch.setattr(evaluate.Evaluator, "evaluate", fake)
    return markers


def _two_stage_run(fake_llm, tmp_path):
    server = fake_llm(Script().route("Analyze this Triton kernel", issues_answer([]))
                      .route("## Stage: fusion", code_answer(GOOD))
                      .route("## Stage: memory_access", code_answer(GOOD_SMALL_BLOCKS)))
    return run(llm_settings(server), tmp_path, stages="fusion,memory_access", max_iters=1)


def test_a_failing_last_kernel_falls_back_to_the_previous_stage(fake_llm, tmp_path, final_fails_for):
    final_fails_for.append("BLOCK_SIZE=128")
    result = _two_stage_run(fake_llm, tmp_path)

    assert result.exit_code == 0 and result.status == "verified correct, speed not measured", result.status
    data, md = report(result.run_dir)
    assert data["final"]["fell_back"] and data["final"]["fell_back_to"] == "fusion" and data["final"]["passed"]
    assert "mismatch on a late shape" in data["final"]["failure"]
    assert "the result is the kernel of stage fusion" in md
    assert (tmp_path / "runs" / result.run_id / "output.py").read_text() == GOOD


def test_when_no_stage_kernel_passes_the_input_is_the_result(fake_llm, tmp_path, final_fails_for):
    final_fails_for.append("_bias_scale_relu_kernel")
    result = _two_stage_run(fake_llm, tmp_path)

    assert result.exit_code == 1 and result.status == "final verification failed"
    data, md = report(result.run_dir)
    assert data["final"]["fell_back_to"] == "input"
    assert data["speed"].startswith("not applicable") and "bench" not in data["speed"]
    assert (tmp_path / "runs" / result.run_id / "output.py").read_text() == KERNEL.read_text()
