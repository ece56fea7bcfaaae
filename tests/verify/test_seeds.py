"""Class 2: nothing a candidate can compute at import time predicts its inputs or its weights.

Seeds for inputs, weights and their perturbation are drawn in the parent (secrets) after the
candidate is imported, and the candidate is built under a seed of its own, then given the
reference's state dict. Each attack below is ordinary code (the static scan has nothing to say)
that passes a verifier with fixed seeds.
"""

from __future__ import annotations

import pytest

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.static import check_source

from .helpers import failed, source

PREDICTIONS = ["predict/seed0_weights.py", "predict/answer_table.py", "predict/init_snapshot.py"]


@pytest.mark.parametrize("path", PREDICTIONS)
def test_predicting_seeds_fails_at_correctness(path: str, evaluator: Evaluator, linear):
    assert check_source(source(path)).findings == []
    failed(evaluator.evaluate(source(path), linear), "correctness")


def test_two_evaluations_draw_different_inputs_and_weights(evaluator: Evaluator, linear):
    """The same honest candidate, twice: the reported errors differ, because the draws do."""
    first = evaluator.evaluate(source("linear/good.py"), linear)
    second = evaluator.evaluate(source("linear/good.py"), linear)
    errors = [[c.max_abs_err for t in v.correctness[0].trials for c in t.comparisons] for v in (first, second)]
    assert first.passed and second.passed and errors[0] != errors[1]


def test_a_given_seed_reproduces_the_draws(linear):
    runs = []
    for _ in range(2):
        with Evaluator("cpu", timeout=120, trials=1, seed=1234) as ev:
            verdict = ev.evaluate(source("linear/good.py"), linear)
        runs.append([c.max_abs_err for t in verdict.correctness[0].trials for c in t.comparisons])
    assert runs[0] == runs[1]
