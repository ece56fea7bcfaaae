"""A crash in the middle of a run, then --resume: finished stages stay done and paid answers are replayed."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import dspy
import pytest

import xe_forge.pipeline.nodes

from .fake_openai import Script, code_answer, issues_answer
from .helpers import candidate, candidates, llm_settings, report, run, store_rows

STAGES = "fusion,memory_access,discovery"


class InjectedCrashError(Exception):
    """Stands for anything that kills the process between two LLM calls (OOM, a bug, a power cut)."""


@pytest.fixture
def stage_calls(monkeypatch):
    """Counts run_stage calls per stage; `crash_after_first[stage] = exc` raises after that stage's 1st candidate."""
    real = xe_forge.pipeline.nodes.run_stage
    calls: Counter[str] = Counter()
    crash_after_first: dict[str, BaseException] = {}

    def counting_run_stage(request, *args, **kwargs):
        name = request.stage.name
        calls[name] += 1
        exc = crash_after_first.pop(name, None)
        if exc is not None:
            inner = kwargs["on_candidate"]

            def record_then_crash(record, proposal, verdict):
                inner(record, proposal, verdict)  # the candidate and its paid answer are stored first
                raise exc

            kwargs["on_candidate"] = record_then_crash
        return real(request, *args, **kwargs)

    monkeypatch.setattr(xe_forge.pipeline.nodes, "run_stage", counting_run_stage)
    counting_run_stage.calls = calls
    counting_run_stage.crash_after_first = crash_after_first
    return counting_run_stage


def _only_run(root: Path) -> str:
    (run_dir,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
    return run_dir.name


def test_resume_after_a_crash_in_the_second_stage(fake_llm, tmp_path, stage_calls, progress, caplog):
    server = fake_llm(Script().route("Analyze this Triton kernel", issues_answer([]))
                      .route("## Stage: fusion", code_answer(candidate("fused_good")))
                      .route("## Stage: memory_access", code_answer(candidate("fused_wrong"))))
    settings = llm_settings(server)
    stage_calls.crash_after_first["memory_access"] = InjectedCrashError("power cut")
    with pytest.raises(InjectedCrashError):
        run(settings, tmp_path, stages=STAGES, max_iters=2)

    run_id = _only_run(tmp_path)
    run_dir = tmp_path / "runs" / run_id
    before = {r["stage"]: r for r in store_rows(run_dir, "stages")}
    assert before["fusion"]["status"] == "improved" and before["memory_access"]["status"] == "running"
    assert "discovery" not in before
    paid = [r.text for r in server.requests]
    assert len(paid) == 3  # analyze, fusion, memory_access #1

    with caplog.at_level(logging.WARNING):
        result = run(settings, tmp_path, resume=run_id, progress=progress)

    assert result.exit_code == 0 and result.status.startswith("improved"), result.status
    # the checkpointed state comes back as its own models, each type on the allow-list (no warning)
    assert not [r for r in caplog.records if "unregistered" in r.getMessage()], caplog.text
    assert dict(stage_calls.calls) == {"fusion": 1, "memory_access": 2, "discovery": 1}
    assert "continuing at stage_memory_access; finished: fusion" in progress.text
    after = {r["stage"]: r for r in store_rows(run_dir, "stages")}
    assert after["fusion"] == before["fusion"]  # untouched: not re-run
    assert after["memory_access"]["status"] == "kept input" and after["discovery"]["status"] == "kept input"

    # nothing already paid for was asked again: analyze, fusion and memory_access #1 each went out once
    texts = [r.text for r in server.requests]
    assert all(texts.count(t) == 1 for t in paid)
    assert len(server.requests_for("Analyze this Triton kernel")) == 1
    assert len(server.requests_for("## Stage: fusion")) == 1
    assert len(server.requests_for("## Stage: memory_access")) == 2  # #1 before the crash, the refine after

    calls = store_rows(run_dir, "llm_calls")
    replayed = [c for c in calls if c["cached"]]
    assert [(c["stage"], c["purpose"]) for c in replayed] == [("memory_access", "optimize")]
    assert replayed[0]["prompt_hash"] == next(c["prompt_hash"] for c in calls
                                              if c["stage"] == "memory_access" and not c["cached"])
    data, md = report(run_dir)
    assert data["llm"]["cached"] == 1 and "1 replayed from cache" in md
    assert [s["stage"] for s in data["stages"]] == ["fusion", "memory_access", "discovery"]
    # the crashed attempt stays on record beside the replayed one
    assert len(candidates(run_dir, "memory_access")) == 3


class InterruptingLM(dspy.utils.DummyLM):
    """Answers in order, and raises KeyboardInterrupt (Ctrl-C) on call number `interrupt_at`."""

    def __init__(self, answers, interrupt_at: int | None = None):
        super().__init__(answers)
        self.interrupt_at = interrupt_at
        self.asked = 0

    def forward(self, prompt=None, messages=None, **kwargs):
        self.asked += 1
        if self.asked == self.interrupt_at:
            raise KeyboardInterrupt
        return super().forward(prompt=prompt, messages=messages, **kwargs)


def _answer(name: str) -> dict[str, str]:
    return {"code": f"```python\n{candidate(name)}```", "rationale": "one launch"}


def test_ctrl_c_in_the_lm_then_resume_with_dummy_lm(tmp_path, stage_calls):
    """Ctrl-C while the second stage waits for the LM; the resumed run asks only for what is missing."""
    first = InterruptingLM([{"issues": []}, _answer("fused_good")], interrupt_at=3)
    with pytest.raises(KeyboardInterrupt):
        run(llm_settings(), tmp_path, stages="fusion,memory_access", max_iters=1, lm=first)
    assert first.asked == 3

    second = InterruptingLM([_answer("fused_good")])  # memory_access: the same code again, so no change
    result = run(llm_settings(), tmp_path, resume=_only_run(tmp_path), lm=second)
    assert second.asked == 1  # only memory_access; analyze and fusion were not asked again
    assert dict(stage_calls.calls) == {"fusion": 1, "memory_access": 2}
    assert result.exit_code == 0
