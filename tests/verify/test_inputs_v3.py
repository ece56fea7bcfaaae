"""Issue 26, classes 4 and 5: shapes and inputs from the kernel and the reference, not from a recipe.

Unseen shapes cross the tiles the kernel launches with (read from its launches), grow several dims at
once, use non-multiples unless the spec declares `multiple_of`, and freeze nothing by name. One trial
draws the inputs real models produce (an offset up to 100 and heavy tails), as wide as the fp32
reference stays finite and stable.
"""

from __future__ import annotations

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator

from .helpers import FIXTURES, failed, problem, source


def test_a_layernorm_keeping_its_last_block_fails_past_its_own_block(evaluator: Evaluator):
    layernorm = problem("layernorm")
    honest = evaluator.evaluate(source("layernorm/good.py"), layernorm, unseen=True)
    assert honest.passed, honest.feedback()
    assert 256 in honest.correctness[0].tiles and any(r.dims["WIDTH"] > 256 for r in honest.correctness)
    verdict = evaluator.evaluate(source("layernorm/last_block.py"), layernorm, unseen=True)
    failed(verdict, "unseen")
    assert all(r.passed for r in verdict.correctness[:3]), "right at every width the spec lists (all below 256)"


@pytest.mark.parametrize("path", ["unseen/two_dims_at_once.py", "unseen/aligned_only.py"])
def test_shapes_a_recipe_never_made_catch_what_it_missed(path: str, evaluator: Evaluator):
    batch_only = load_problem(FIXTURES / path, FIXTURES / "linear" / "ref_pytorch.py",
                              FIXTURES / "linear" / "batch_only.yaml")
    assert evaluator.evaluate(source(path), batch_only).passed, "right at the visible shape"
    verdict = evaluator.evaluate(source(path), batch_only, unseen=True)
    failed(verdict, "unseen")
    assert verdict.correctness[1].passed, "right at the spec's own (batch-only) unseen shape"


def test_a_dim_named_output_is_varied(evaluator: Evaluator):
    named = load_problem(FIXTURES / "unseen" / "output_hardcoded.py", FIXTURES / "linear" / "ref_pytorch.py",
                         FIXTURES / "linear" / "output_named.yaml")
    verdict = evaluator.evaluate(named.kernel.source, named, unseen=True)
    failed(verdict, "unseen")
    assert "OUTPUT_SIZE" not in verdict.correctness[0].frozen


# trial 1 draws signed inputs spread up to 1e5 (cases.SCALES): exp without the max subtraction overflows there too
@pytest.mark.parametrize("name, attack, also", [("softmax", "no_max.py", {"trial 1"}),
                                                ("layernorm", "one_pass_variance.py", set())])
def test_kernels_that_break_on_real_inputs_fail_on_wide_ones(name: str, attack: str, also: set[str],
                                                             evaluator: Evaluator):
    prob = problem(name)
    honest = evaluator.evaluate(source(f"{name}/good.py"), prob)
    assert honest.passed, honest.feedback()
    verdict = evaluator.evaluate(source(f"{name}/{attack}"), prob)
    failed(verdict, "correctness")
    trials = verdict.correctness[0].trials
    assert all(t.passed for t in trials if t.inputs != "wide" and t.label not in also), "right at unit scale"
    assert not any(t.passed for t in trials if t.inputs == "wide" or t.label in also)
