"""The run's time budget at the granularity that can overrun it: a candidate, a lowering, the final check.

On an H100 (2026-12-07) a 150 s run ended in the middle of its sixth stage: the budget was checked only
between stages and the final check had no room kept. These drive the clock with a fake one."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from xe_forge.config import RunOptions
from xe_forge.pipeline.cover import run_stage
from xe_forge.pipeline.run_clock import COMPILE_S, DEFAULT_GPU_SECONDS, RunClock, default_budget_s
from xe_forge.proposers.base import Proposal, StageRequest
from xe_forge.stages import StageSpec
from xe_forge.verify.models import Verdict


class FakeTime:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_the_final_check_has_its_room_and_a_candidate_starts_only_where_one_more_fits():
    now = FakeTime()
    clock = RunClock(150.0, now=now)
    now.t += 20.0
    clock.saw_input_check(12.0)  # the input's check: the final gets 1.5x of it
    assert clock.final_s == 18.0 and clock.left() == pytest.approx(150 - 20 - 18)
    assert clock.candidate_stop() is None
    clock.saw_candidate(30.0)
    now.t += 90.0  # 22 s left before the final's room: a 30 s candidate would end past it
    reason = clock.candidate_stop()
    assert reason is not None and "22 s left" in reason and "30 s" in reason
    assert clock.stage_stop() is None  # a stage may still start (its candidates may be cheaper: unchanged, repeats)
    now.t += 23.0
    assert clock.stage_stop() == "time budget spent"


def test_a_slow_input_leaves_the_stages_half_the_budget_and_a_timed_final_compiles_too():
    clock = RunClock(100.0, now=FakeTime())
    clock.saw_input_check(200.0)
    assert clock.final_s == 50.0
    timed = RunClock(150.0, now=FakeTime())
    timed.saw_input_check(10.0, timed=True)
    assert timed.final_s == 15.0 + COMPILE_S


def test_the_lowering_gets_a_share_of_what_is_left_and_none_when_too_little():
    now = FakeTime()
    clock = RunClock(150.0, now=now)
    clock.saw_input_check(10.0)  # final 15 s; 135 s left; a candidate 10 s
    assert clock.lowering_budget(60.0) == pytest.approx(0.35 * (135 - 10))
    assert RunClock(None).lowering_budget(60.0) == 60.0  # no budget: the lowering's own cap
    now.t += 120.0  # 15 s left: 0.35 * 5 s is under the floor
    assert clock.lowering_budget(60.0) is None


def test_the_default_budget_is_the_rules_engine_on_a_gpu_and_none_removes_it():
    assert default_budget_s("rules", measures_speed=True) == DEFAULT_GPU_SECONDS
    assert default_budget_s("rules", measures_speed=False) is None  # the CPU: correctness only
    assert default_budget_s("llm", measures_speed=True) is None  # an LLM run is bounded in dollars or tokens
    off = RunOptions(budget="none")
    assert off.budget_off() and off.spending_limit() is None
    given = RunOptions(budget="45m")
    assert not given.budget_off() and given.spending_limit().amount == 2700


class _Proposer:
    """Offers distinct candidates forever."""

    def __init__(self) -> None:
        self.n = 0

    def reset(self) -> None:
        pass

    def next(self, request: StageRequest) -> Proposal:
        self.n += 1
        return Proposal(code=f"x = {self.n}\n", recipe=f"r{self.n}", source="rules")


def test_a_stage_stops_before_the_candidate_that_would_overrun_and_says_why():
    now = FakeTime()
    clock = RunClock(100.0, now=now)
    clock.saw_input_check(4.0)  # final 10 s (the floor); candidates cost 25 s each below

    def evaluate(code, problem, **_):
        now.t += 25.0
        return Verdict(passed=False, stage_failed="correctness", seconds=25.0)

    evaluator = SimpleNamespace(evaluate=evaluate, measures_speed=True)
    stage = StageSpec(name="fusion", order=1, summary="s", goal="g")
    request = StageRequest(stage=stage, code="# input\n", reference="")
    outcome = run_stage(request, problem=None, proposers=[_Proposer()], evaluator=evaluator, allowance=set(),
                        max_iters=10, clock=clock)
    # 90 s before the final's room: three candidates of 25 s fit (75 s), a fourth would end at 100 s
    assert len(outcome.candidates) == 3
    assert outcome.note.startswith("time budget: 15 s left") and "25 s" in outcome.note
    assert now.t - 1000.0 == 75.0

    unbounded = run_stage(request, problem=None, proposers=[_Proposer()], evaluator=evaluator, allowance=set(),
                          max_iters=5, clock=RunClock(None, now=now))
    assert len(unbounded.candidates) == 5 and unbounded.note == ""
