"""Class 1: the judge lives where the candidate cannot reach it.

Each attack here worked against a verifier that compared in the candidate's process: reading the
expected output from the harness's frames, calling the reference found by gc, rebinding builtins,
loosening the tolerance table in place, answering for the harness on its pipe. The static scan
refuses every one of them; these tests switch it off to show the process boundary holds on its own:
the reference, the expected outputs, the tolerances and the decision are in another process.
"""

from __future__ import annotations

import pytest

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source

from .helpers import finding, source, unguarded

# attack -> (stage, check): wrong answers fail at correctness; rebinding builtins is also seen by the
# patch guard at import (and the process is replaced, so the next candidate gets clean builtins); the
# attacks that test for ghost replay with `.item()` are named for that host exit first, and their
# answers are wrong all the same
ATTACKS = {"trust/frame_walk.py": ("audit", "host-compute"),
           "trust/gc_reference.py": ("audit", "host-compute"),
           "trust/builtins_rebind.py": ("import", "monkey-patch"),
           # its wrong-on-purpose bias flip is torch compute now (flip reorders data: not movement)
           "trust/tolerance_table.py": ("audit", "torch-compute")}


@pytest.mark.parametrize("path", sorted(ATTACKS))
def test_in_process_attack_on_the_judge_finds_nothing_to_attack(path: str, evaluator: Evaluator, linear):
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source(path), linear)
    stage, check = ATTACKS[path]
    assert not verdict.passed, verdict.feedback()
    assert verdict.stage_failed == stage, verdict.feedback()
    assert finding(verdict, check).message
    if stage == "audit":  # nothing found to attack: the answers are its own, wrong (a trial whose inputs are
        # scaled to ~1e5 may not see a flipped bias within tolerance; had it found the reference, all would pass)
        trials = verdict.correctness[0].trials
        assert not trials[0].passed and not all(t.passed for t in trials), verdict.feedback()


@pytest.mark.parametrize("path", [*ATTACKS, "trust/forged_reply.py"])
def test_the_static_scan_refuses_the_same_attacks(path: str):
    assert {f.check for f in check_source(source(path)).findings} & {"sandbox", "monkey-patch"}


def test_a_reply_forged_on_the_harness_pipe_is_not_believed(evaluator: Evaluator, linear):
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("trust/forged_reply.py"), linear)
        assert not verdict.passed, verdict.feedback()
        assert verdict.stage_failed in ("correctness", "worker"), verdict.feedback()
        # the real reply, left in the pipe, answers out of turn: that process is replaced, and the next
        # evaluation is unaffected
        assert evaluator.evaluate(source("linear/good.py"), linear).passed


def test_the_reference_and_the_candidate_run_in_different_processes(evaluator: Evaluator, linear):
    assert evaluator.evaluate(source("linear/good.py"), linear).passed
    assert evaluator.judge.pid and evaluator.runner.pid and evaluator.judge.pid != evaluator.runner.pid
