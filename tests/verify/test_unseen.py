"""Class 6: unseen shapes cross tile boundaries in every free dim, with every check run there too.

The gemm problem's spec, like the examples', only varies the batch in its own unseen entries; a kernel
hard-coded for the visible grid, N or K passes those. The verifier adds one shape per free dim (that
dim larger past the next multiple of 128 or of a power of two, the others smaller), probing the
reference for values it accepts, and reports the dims it could not vary. Without a spec the module's
constants are rescaled, all of them, not only the batch.
"""

from __future__ import annotations

import pytest

from xe_forge.problem.constants import module_constants, rewrite_constants
from xe_forge.problem.kernel import load_problem
from xe_forge.problem.unseen import bigger_candidates, frozen_reason, plan_unseen, smaller_candidates
from xe_forge.verify.evaluate import Evaluator

from .helpers import FIXTURES, failed, problem, source

HARD_CODED = ["unseen/grid_for_visible_batch.py", "unseen/k_hardcoded.py", "unseen/n_hardcoded.py"]


@pytest.fixture(scope="module")
def gemm():
    return problem("gemm")


def test_an_honest_kernel_passes_every_unseen_shape_with_every_check(evaluator: Evaluator, gemm):
    verdict = evaluator.evaluate(source("gemm/good.py"), gemm, unseen=True)
    assert verdict.passed, verdict.feedback()
    unseen = verdict.correctness[1:]
    assert [r.dims["BATCH"] for r in unseen[:2]] == [5, 29], "the spec's own entries come first"
    generated = unseen[2:]
    for dim, visible in (("BATCH", 12), ("IN_FEAT", 40), ("OUT_FEAT", 24)):
        values = {r.dims[dim] for r in generated}
        assert max(values) > visible and min(values) < visible, f"{dim} varied both ways: {values}"
        assert all(v % 128 for v in values), "never a multiple of 128"
    assert all(r.ghost_changed and r.audit is not None and r.launches for r in unseen)


@pytest.mark.parametrize("path", HARD_CODED)
def test_a_kernel_hard_coded_for_the_visible_shape_fails_a_generated_shape(path: str, evaluator: Evaluator, gemm):
    assert evaluator.evaluate(source(path), gemm).passed, "right at the visible shape"
    verdict = evaluator.evaluate(source(path), gemm, unseen=True)
    failed(verdict, "unseen")
    reports = verdict.correctness
    assert all(r.passed for r in reports[:3]), "the visible shape and the spec's batch-only entries pass"
    assert not reports[-1].passed and len(reports) > 3
    shown = verdict.feedback()
    assert "unseen" in shown and "IN_FEAT=" not in shown and "BATCH=" not in shown


def test_without_a_spec_every_constant_feeding_the_inputs_is_rescaled(evaluator: Evaluator):
    reference = FIXTURES / "gemm" / "ref_pytorch.py"
    good = load_problem(FIXTURES / "gemm" / "good.py", reference, discover_spec=False)
    verdict = evaluator.evaluate(good.kernel.source, good, unseen=True)
    assert verdict.passed, verdict.feedback()
    dims = [r.dims for r in verdict.correctness[1:]]
    assert {d["in_features"] for d in dims} - {40} and {d["out_features"] for d in dims} - {24}
    assert verdict.correctness[0].frozen == {"scale": "not an integer size"}
    hard = load_problem(FIXTURES / "unseen" / "k_hardcoded.py", reference)
    failed(evaluator.evaluate(hard.kernel.source, hard, unseen=True), "unseen")


def test_frozen_dims_are_reported(evaluator: Evaluator):
    conv = problem("conv")
    verdict = evaluator.evaluate(source("conv/good.py"), conv, allow_torch={"self.conv"}, unseen=True)
    assert verdict.passed, verdict.feedback()
    assert "hyperparameter" in verdict.correctness[0].frozen["KSIZE"]
    assert any("KSIZE fixed" in n for n in verdict.notes)


# ---------------------------------------------------------------- the planner


@pytest.mark.parametrize("v", [1, 3, 8, 12, 13, 24, 40, 64, 72, 128, 1000, 1024, 8192])
def test_candidates_cross_tile_boundaries_both_ways(v: int):
    big = bigger_candidates(v)[0]
    assert big > v and (big - v) % 128 and big % 16
    tile = 128 if v >= 32 else 16
    assert big > -(-v // tile) * tile, "past the tile boundary after the visible size"
    if v > 1:
        small = smaller_candidates(v)[0]
        assert 1 <= small < v and (small % 16 or small < 16)
    if v % 8 == 0:
        assert big % 8 == 0, "an aligned size stays 16-byte aligned"


@pytest.mark.parametrize("name, value, frozen", [
    ("batch_size", 128, False), ("in_channels", 3, False), ("D", 16, False), ("hidden_dim", 4096, False),
    ("kernel_size", 3, True), ("num_groups", 8, True), ("stride", 2, True), ("pool_kernel_size", 2, True),
    ("dim", 1, True), ("scale_factor", 2, True), ("eps", 1e-5, True), ("KSIZE", 3, True), ("GROUPS", 4, True),
])
def test_hyperparameters_and_non_sizes_are_frozen(name: str, value, frozen: bool):
    assert (frozen_reason(name, value) is not None) == frozen


def test_constraints_between_dims_are_kept():
    """channels must stay divisible by groups: the plan finds values the reference accepts."""
    dims = {"BATCH": 4, "CH": 64, "GROUPS": 8, "H": 12}
    plan = plan_unseen(dims, lambda d: d["CH"] % d["GROUPS"] == 0 and d["H"] >= 3)
    assert plan.frozen == {"GROUPS": "a hyperparameter ('groups' in its name)"}
    assert all(s.dims["CH"] % 8 == 0 for s in plan.shapes)
    for dim in ("BATCH", "CH", "H"):
        assert any(s.dims[dim] > dims[dim] for s in plan.shapes) and any(s.dims[dim] < dims[dim] for s in plan.shapes)


def test_a_dim_the_reference_never_accepts_changed_is_reported():
    plan = plan_unseen({"N": 32, "M": 32}, lambda d: d["M"] == 32)
    assert "M" in plan.frozen and "reference accepts no other value" in plan.frozen["M"]


def test_module_constants_follow_tuples_and_derived_values():
    src = (FIXTURES / "kb" / "85_Conv2d_GroupNorm_Scale_MaxPool_Clamp.py").read_text()
    constants = module_constants(src)
    assert constants["out_channels"] == 16 and "scale_shape" not in constants
    rewritten = rewrite_constants(src, {"out_channels": 24})
    assert "out_channels = 24" in rewritten and "scale_shape = (out_channels, 1, 1)" in rewritten
    tuples = rewrite_constants("D, H, W = (8, 16, 16)\nh = w = 10\n", {"H": 20, "w": 3})
    assert "D, H, W = (8, 20, 16)" in tuples and "h = 10" in tuples and "w = 3" in tuples
