"""Issue 21: verify at the weights a trained model has, be fair on degenerate problems, and judge on
the problem's own inputs and signed ones.

KernelBench problems outside examples/ (references copied into fixtures/kb, constants shrunk): #85
(GroupNorm affine, a ones-scale), #33 (BatchNorm affine), #23 (GroupNorm then a mean: exactly 0 at
the initial weights). Ports that skip work which is the identity at the initial weights pass there
and must fail at perturbed weights, naming the parameter; an exact port of #23 must pass and zeros
must fail, for the right reason.
"""

from __future__ import annotations

import pytest
import torch

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.compare import compare, degenerate
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.weights import perturbed

from .helpers import FIXTURES, failed, finding, problem, source

KB = FIXTURES / "kb"
REFERENCES = {"85": "85_Conv2d_GroupNorm_Scale_MaxPool_Clamp.py", "23": "23_Conv3d_GroupNorm_Mean.py",
              "33": "33_Gemm_Scale_BatchNorm.py"}


def kb(kernel: str):
    return load_problem(KB / kernel, KB / REFERENCES[kernel.split("_")[0]])


@pytest.mark.parametrize("kernel", ["85_port.py", "33_port.py", "23_port.py"])
def test_honest_ports_pass_at_initial_and_perturbed_weights(kernel: str, evaluator: Evaluator):
    verdict = evaluator.evaluate(kb(kernel).kernel.source, kb(kernel), allow_torch={"self.conv"}, unseen=True)
    assert verdict.passed, verdict.feedback()
    trials = verdict.correctness[0].trials
    assert {t.weights for t in trials} == {"initial", "perturbed", "pruned"}  # pruned: exact zeros (rule 8b)
    assert {t.inputs for t in trials} == {"problem", "signed", "wide"}


@pytest.mark.parametrize("kernel, params", [("85_skip_affine.py", ["scale", "group_norm.weight", "group_norm.bias"]),
                                            ("33_skip_affine.py", ["bn.weight", "bn.bias"])])
def test_skipping_an_identity_affine_fails_and_names_the_parameters(kernel: str, params, evaluator: Evaluator):
    verdict = evaluator.evaluate(kb(kernel).kernel.source, kb(kernel), allow_torch={"self.conv"})
    failed(verdict, "correctness")
    trials = verdict.correctness[0].trials
    assert all(t.passed for t in trials if t.weights == "initial"), "exact at the initial weights"
    assert not any(t.passed for t in trials if t.weights == "perturbed")
    message = finding(verdict, "parameter").message
    assert all(f"`{p}`" in message for p in params) and "does not change" in message
    assert "running_mean" not in message, "a buffer the output ignores (training mode) is never blamed"


def test_an_exact_port_of_a_degenerate_problem_passes_and_the_report_says_why(evaluator: Evaluator):
    verdict = evaluator.evaluate(kb("23_port.py").kernel.source, kb("23_port.py"), allow_torch={"self.conv"})
    assert verdict.passed, verdict.feedback()
    flags = verdict.correctness[0].degenerate
    assert "output is matched by zeros at the initial weights" in flags
    # the perturbed affine moves it off zero; how much the output then depends on the input is the
    # draw's (a mean over a normalised group: weakly), so that flag may or may not hold there
    assert not any("matched by zeros" in f and not f.endswith("at the initial weights") for f in flags)
    assert any("the reference is degenerate" in n for n in verdict.notes)


def test_zeros_on_a_degenerate_problem_fail_at_the_perturbed_weights(evaluator: Evaluator):
    verdict = evaluator.evaluate(kb("23_zeros.py").kernel.source, kb("23_zeros.py"), allow_torch={"self.conv"})
    failed(verdict, "correctness")
    trials = verdict.correctness[0].trials
    assert all(t.passed for t in trials if t.weights == "initial"), "zeros are right where the reference is 0"
    assert not any(t.passed for t in trials if t.weights == "perturbed"), "and wrong once the affine moves"


def test_a_kernel_right_only_for_the_problems_own_inputs_fails_on_signed_ones(evaluator: Evaluator):
    gemm = problem("gemm")
    verdict = evaluator.evaluate(source("inputs/abs_input.py"), gemm)
    failed(verdict, "correctness")
    trials = verdict.correctness[0].trials
    assert all(t.passed for t in trials if t.inputs == "problem") and not any(t.passed for t in trials
                                                                             if t.inputs == "signed")
    assert any("torch.rand" in d for d in verdict.correctness[0].inputs), "the report names the distributions"
    assert any(d.startswith("signed") for d in verdict.correctness[0].inputs)


# ---------------------------------------------------------------- the perturbation and the comparison


def test_every_floating_entry_moves_positive_ones_stay_positive_and_the_rest_is_untouched():
    state = {"w": torch.randn(8, 4), "ones": torch.ones(8), "zeros": torch.zeros(8), "var": torch.rand(8) + 0.5,
             "count": torch.tensor(3), "inf": torch.tensor([1.0, float("inf")]), "empty": torch.empty(0)}
    moved = perturbed(state, seed=7)
    for name in ("w", "ones", "zeros", "var"):
        assert not torch.equal(moved[name], state[name]), name
    assert bool((moved["ones"] > 0).all()) and bool((moved["var"] > 0).all())
    assert (moved["zeros"] - state["zeros"]).abs().mean() > 0.1, "a constant tensor moves by a real amount"
    assert torch.equal(moved["count"], state["count"]) and torch.equal(moved["inf"], state["inf"])
    assert torch.equal(perturbed(state, seed=7)["w"], moved["w"]) and not torch.equal(perturbed(state, 8)["w"],
                                                                                       moved["w"])


def test_a_near_zero_reference_is_judged_by_the_absolute_tolerance_only():
    want = 1e-9 * torch.randn(64)  # rounding noise around an exact 0
    got = want + 3e-7 * torch.randn(64)  # an honest port's noise: relative error ~300
    assert degenerate(want, atol=1e-4) and compare("out", got, want, 1e-4, 1e-4, torch.float32).passed
    assert not compare("out", got + 1e-3, want, 1e-4, 1e-4, torch.float32).passed


def test_small_but_real_outputs_keep_the_relative_bound():
    want = torch.softmax(torch.randn(4, 8192), dim=-1)  # ~1.2e-4 per entry, max well above atol
    assert not degenerate(want, atol=1e-4)
    assert not compare("out", want * 1.05, want, 1e-4, 1e-4, torch.float32).passed
