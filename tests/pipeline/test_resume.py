"""A crash in the middle of a run, then --resume: finished stages stay done and paid answers are replayed."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import dspy
import pytest

import xe_forge.pipeline.nodes
from xe_forge.errors import Interrupted

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

    assert result.exit_code == 0 and result.status == "verified correct, speed not measured", result.status
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
    with pytest.raises(Interrupted) as stop:
        run(llm_settings(), tmp_path, stages="fusion,memory_access", max_iters=1, lm=first)
    assert first.asked == 3
    run_id = _only_run(tmp_path)
    best = tmp_path / "runs" / run_id / "best_so_far.py"  # fusion's accepted kernel, kept when accepted
    assert str(stop.value) == (f"interrupted: run {run_id} is saved; the best verified kernel so far is {best}; "
                               f"continue with: xe-forge optimize --resume {run_id} --run-dir {tmp_path / 'runs'}")
    assert best.is_file()
    assert stop.value.exit_code == 130
    saved = json.loads((tmp_path / "runs" / run_id / "report.json").read_text())  # the report says so too
    assert saved["status"] == "interrupted" and f"xe-forge optimize --resume {run_id}" in saved["error"]

    second = InterruptingLM([_answer("fused_good")])  # memory_access: the same code again, so no change
    result = run(llm_settings(), tmp_path, resume=_only_run(tmp_path), lm=second)
    assert second.asked == 1  # only memory_access; analyze and fusion were not asked again
    assert dict(stage_calls.calls) == {"fusion": 1, "memory_access": 2}
    assert result.exit_code == 0


def test_a_crash_in_the_middle_of_a_stage_keeps_its_accepted_candidate(fake_llm, tmp_path, stage_calls):
    """best_so_far.py follows each accepted candidate, not each finished stage: on the H200 a run stopped at
    its time limit during a stage's second candidate had kept only the stage before (0.42x eager where the
    accepted first candidate of the unfinished stage was 1.9x faster than that)."""
    server = fake_llm(Script().route("Analyze this Triton kernel", issues_answer([]))
                      .route("## Stage: fusion", code_answer(candidate("fused_good"))))
    stage_calls.crash_after_first["fusion"] = InjectedCrashError("killed at the job's time limit")
    with pytest.raises(InjectedCrashError):
        run(llm_settings(server), tmp_path, stages=STAGES, max_iters=2)
    run_dir = tmp_path / "runs" / _only_run(tmp_path)
    assert {r["stage"]: r["status"] for r in store_rows(run_dir, "stages")}["fusion"] == "running"
    assert (run_dir / "best_so_far.py").read_text() == candidate("fused_good")


def _ctrl_c_run(fake_llm, tmp_path, *, whole_group: bool):
    """`xe-forge optimize` in its own process, Ctrl-C while it waits for the model, then the printed resume."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from .fake_openai import Reply
    from .helpers import KERNEL

    server = fake_llm(Script().route("Analyze this Triton kernel", issues_answer([]))
                      .route("## Stage: fusion", Reply(content="late", delay=120), code_answer(candidate("fused_good"))))
    env = {**os.environ, "XE_FORGE_MODEL": "openai/fake", "XE_FORGE_API_BASE": server.api_base,
           "XE_FORGE_LLM_RETRIES": "0", "COLUMNS": "400", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    command = [sys.executable, "-m", "xe_forge", "optimize", str(KERNEL), "--engine", "llm", "--device", "cpu",
               "--stages", "fusion", "--max-iters", "2", "--run-dir", str(tmp_path / "runs"), "-o",
               str(tmp_path / "best.py")]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not server.requests_for("## Stage: fusion") and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert server.requests_for("## Stage: fusion"), "the run never asked for the fusion candidate"
        if whole_group:  # what a terminal does: every process of the foreground group gets SIGINT
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err, env


@pytest.mark.slow
def test_ctrl_c_ends_with_one_line_and_the_printed_resume_finishes(fake_llm, tmp_path):
    import subprocess
    import sys

    code, _, err, env = _ctrl_c_run(fake_llm, tmp_path, whole_group=False)
    assert code == 130, err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith(("error:", "interrupted"))]
    assert "interrupted: run" in line and "continue with: xe-forge optimize --resume" in line
    resume = line.split("continue with: ", 1)[1].split()
    done = subprocess.run([sys.executable, "-m", "xe_forge", *resume[1:]], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert "_bias_scale_relu_kernel" in (tmp_path / "best.py").read_text()  # -o kept by the resume


@pytest.mark.slow
def test_ctrl_c_from_a_terminal_prints_no_worker_traceback(fake_llm, tmp_path):
    code, _, err, _ = _ctrl_c_run(fake_llm, tmp_path, whole_group=True)
    assert code == 130 and "Traceback" not in err, err
