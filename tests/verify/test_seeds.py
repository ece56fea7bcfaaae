"""Class 2: nothing a candidate can compute at import time predicts its inputs or its weights.

Seeds for inputs, weights and their perturbation are drawn in the parent after the candidate is
imported, from a secret the candidate cannot reach (seeds.py), and the candidate is built under a
seed of its own, then given the reference's state dict. Each attack below is ordinary code (the static scan has nothing to say)
that passes a verifier with fixed seeds.
"""

from __future__ import annotations

import pytest

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source

from .helpers import failed, source, unguarded

PREDICTIONS = ["predict/seed0_weights.py", "predict/init_snapshot.py"]


@pytest.mark.parametrize("path", PREDICTIONS)
def test_predicting_seeds_fails_at_correctness(path: str, evaluator: Evaluator, linear):
    assert check_source(source(path)).findings == []
    failed(evaluator.evaluate(source(path), linear), "correctness")


def test_an_answer_table_keyed_on_input_values_reads_them_through_a_host_exit(evaluator: Evaluator, linear):
    """Looking inputs up needs their values on the host (`.item()`): outside the host subset, and refused
    by the audit with the scan off."""
    assert {f.check for f in check_source(source("predict/answer_table.py")).findings} == {"host-compute"}
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("predict/answer_table.py"), linear)
    assert not verdict.passed and "item" in " ".join(f.message for f in verdict.findings), verdict.feedback()


def _errors(ev: Evaluator, linear) -> list[float]:
    verdict = ev.evaluate(source("linear/good.py"), linear)
    assert verdict.passed, verdict.feedback()
    return [c.max_abs_err for t in verdict.correctness[0].trials for c in t.comparisons]


def test_two_evaluators_draw_different_inputs_and_weights(evaluator: Evaluator, linear):
    with Evaluator("cpu", timeout=120, trials=3) as other:
        assert _errors(evaluator, linear) != _errors(other, linear)


def test_a_resumed_run_replays_its_draws_from_a_secret_only_its_directory_holds(tmp_path, linear):
    runs = []
    for _ in range(2):
        with Evaluator("cpu", timeout=120, trials=1, workdir=tmp_path) as ev:
            runs.append(_errors(ev, linear))
    assert runs[0] == runs[1], "the same draws: a resumed run's prompts match the LLM cache"
    secret = tmp_path / ".verifier-secret"
    assert secret.stat().st_mode & 0o777 == 0o600 and len(secret.read_bytes()) == 32


def test_a_given_seed_reproduces_the_draws(linear):
    runs = []
    for _ in range(2):
        with Evaluator("cpu", timeout=120, trials=1, seed=1234) as ev:
            runs.append(_errors(ev, linear))
    assert runs[0] == runs[1]
