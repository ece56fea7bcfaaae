"""Unseen shapes cross the tiles the kernel launches with in every free dim, with every check run there.

The gemm problem's spec, like the examples', only varies the batch in its own unseen entries; a kernel
hard-coded for the visible grid, N or K passes those. The verifier adds shapes from the kernel's own
launches and the reference (problem/unseen.py): every dim grown at once, each dim past the largest
tile it can take within the size bound, every dim smaller, one dim larger with the others smaller;
non-multiples unless the spec declares `multiple_of`; a dim is frozen only where no accepted value
changes a tensor's shape, never by its name. Without a spec the module's constants are rescaled.
"""

from __future__ import annotations

import pytest

from xe_forge.problem.constants import module_constants, rewrite_constants
from xe_forge.problem.kernel import load_problem
from xe_forge.problem.unseen import (
    COST_CAP,
    LARGE_GROWTH,
    MIN_BUDGET,
    ShapeProbe,
    bigger_candidates,
    growth,
    plan_unseen,
    simple_probe,
    smaller_candidates,
)
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
    visible = {"BATCH": 12, "IN_FEAT": 40, "OUT_FEAT": 24}
    # one shape has every dim an exact multiple of the kernel's tiles (16): a K % BK == 0 fast path is run
    aligned = [r for r in generated if all(r.dims[d] % 16 == 0 for d in visible)]
    assert len(aligned) == 1 and all(r.dims[d] > visible[d] for d in visible for r in aligned)
    for dim, size in visible.items():
        values = {r.dims[dim] for r in generated}
        assert max(values) > size and min(values) < size, f"{dim} varied both ways: {values}"
        odd = {r.dims[dim] for r in generated if r not in aligned}
        assert all(v % 8 for v in odd if v != size), f"non-multiples elsewhere (no multiple_of declared): {odd}"
    assert any(all(r.dims[d] > visible[d] for d in visible) for r in generated), "several dims grown at once"
    assert all(r.ghost_changed and r.audit is not None and r.launches for r in unseen)
    assert verdict.correctness[0].tiles and any("own tiles" in n for n in verdict.notes)


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


def test_dims_are_frozen_by_what_the_reference_does_not_by_name(evaluator: Evaluator):
    """KSIZE is a size (it changes the weight's shape): varied both ways where the reference accepts it
    (on 8x8 images no tile-sized kernel fits: just past 3, and smaller)."""
    conv = problem("conv")
    verdict = evaluator.evaluate(source("conv/good.py"), conv, allow_torch={"self.conv"}, unseen=True)
    assert verdict.passed, verdict.feedback()
    sizes = {r.dims["KSIZE"] for r in verdict.correctness[2:]}
    assert min(sizes) < 3 < max(sizes), sizes
    assert "KSIZE" not in verdict.correctness[0].frozen


# ---------------------------------------------------------------- the planner


@pytest.mark.parametrize("v", [1, 3, 8, 12, 13, 24, 40, 64, 72, 128, 1000, 1024, 8192])
def test_candidates_cross_tile_boundaries_both_ways(v: int):
    why, big = bigger_candidates(v)[0]
    tile = 128 if v >= 32 else 16
    assert big > -(-v // tile) * tile and big % 2, "past the tile boundary after the visible size, odd"
    if v > 1:
        small = smaller_candidates(v)[0]
        assert 1 <= small < v and small % 2


def test_candidates_cross_the_kernels_own_largest_tile_first():
    """A row walked in 256-column blocks: a width of 64 is checked past 256, then past the recipe's 128."""
    sizes = [c for _, c in bigger_candidates(64, [16, 256])]
    assert sizes[0] == 259 and any(129 <= c < 256 for c in sizes)
    assert all(c % 8 == 0 for _, c in bigger_candidates(64, [256], step=8)), "a declared multiple_of is kept"


def test_a_dim_past_a_tile_grows_alone_where_the_joint_shape_cannot_take_it():
    plan = plan_unseen({"BATCH": 4, "WIDTH": 64}, simple_probe(lambda d: True), [256])
    widths = {s.name: s.dims["WIDTH"] for s in plan.shapes}
    assert any(w > 256 for w in widths.values()), widths
    assert any(s.dims["BATCH"] > 4 and s.dims["WIDTH"] > 64 for s in plan.shapes), "several dims at once"


def test_the_size_bound_keeps_a_check_fast():
    visible = {"BATCH": 13, "N": 80}
    plan = plan_unseen(visible, simple_probe(lambda d: True), [1 << 13])
    for shape in plan.shapes:
        assert shape.dims["BATCH"] * shape.dims["N"] <= max(COST_CAP * 13 * 80, MIN_BUDGET), shape


def test_a_dim_that_changes_no_tensor_shape_is_frozen_whatever_its_name():
    """`output_size` is a size here; `axis` changes no tensor's shape (softmax over another dim)."""
    def probe(d):
        return ShapeProbe(signature=(("in", (d["batch"], d["output_size"])),), volume=d["batch"] * d["output_size"])

    plan = plan_unseen({"batch": 8, "output_size": 40, "axis": 1}, probe)
    assert "output_size" not in plan.frozen and "no tensor's shape" in plan.frozen["axis"]
    assert any(s.dims["output_size"] > 40 for s in plan.shapes)


def test_constraints_between_dims_are_kept():
    """channels must stay divisible by groups: the plan finds values the reference accepts."""
    dims = {"BATCH": 4, "CH": 64, "GROUPS": 8, "H": 12}
    plan = plan_unseen(dims, simple_probe(lambda d: d["CH"] % d["GROUPS"] == 0 and d["H"] >= 3))
    assert all(s.dims["CH"] % s.dims["GROUPS"] == 0 for s in plan.shapes)
    for dim in ("BATCH", "CH", "H"):
        assert any(s.dims[dim] > dims[dim] for s in plan.shapes) and any(s.dims[dim] < dims[dim] for s in plan.shapes)
    assert any(s.dims["GROUPS"] != 8 for s in plan.shapes) and "budget" in plan.frozen.get("GROUPS", "budget")


def test_a_dim_the_reference_never_accepts_changed_is_reported():
    plan = plan_unseen({"N": 32, "M": 32}, simple_probe(lambda d: d["M"] == 32))
    assert "M" in plan.frozen and "reference accepts no other value" in plan.frozen["M"]


def test_module_constants_follow_tuples_and_derived_values():
    src = (FIXTURES / "kb" / "85_Conv2d_GroupNorm_Scale_MaxPool_Clamp.py").read_text()
    constants = module_constants(src)
    assert constants["out_channels"] == 16 and "scale_shape" not in constants
    rewritten = rewrite_constants(src, {"out_channels": 24})
    assert "out_channels = 24" in rewritten and "scale_shape = (out_channels, 1, 1)" in rewritten
    tuples = rewrite_constants("D, H, W = (8, 16, 16)\nh = w = 10\n", {"H": 20, "w": 3})
    assert "D, H, W = (8, 20, 16)" in tuples and "h = 10" in tuples and "w = 3" in tuples


def test_tiles_written_as_expressions_or_module_constants_are_read():
    from xe_forge.verify.tiles import jit_tiles

    src = ("import triton\nimport triton.language as tl\nTOP: tl.constexpr = 1 << 9\nHALF = 64\n\n"
           "@triton.jit\ndef k(x, n):\n    A: tl.constexpr = 2 * 128\n    c = tl.arange(0, HALF * 2)\n"
           "    for i in range(0, n, TOP):\n        pass\n")
    assert jit_tiles(src) == {64, 128, 256, 512}  # HALF is a module constant the body reads


def test_a_secret_shape_is_drawn_per_seed_past_the_visible_sizes():
    from xe_forge.problem.unseen import plan_unseen, simple_probe

    probe = simple_probe(lambda d: True)
    drawn = [plan_unseen({"B": 4, "N": 37}, probe, [16], seed=s).shapes[-1] for s in range(20)]
    assert all(d.name == "drawn in secret" and d.dims["B"] > 4 and d.dims["N"] > 37 for d in drawn)
    assert len({tuple(d.dims.values()) for d in drawn}) > 10  # not a recipe: an earlier printout names none
    assert all(s.name != "drawn in secret" for s in plan_unseen({"B": 4, "N": 37}, probe, [16]).shapes)


def conv_probe(dims: dict) -> ShapeProbe | None:
    """A Conv2d's tensors and FLOPs (what the meta-device probe reports for a real reference)."""
    b, cin, cout, h, w, k = (dims[n] for n in ("BATCH", "IN_CH", "OUT_CH", "H", "W", "KSIZE"))
    if min(b, cin, cout, h, w, k) < 1 or k > min(h, w):
        return None
    ho, wo = h - k + 1, w - k + 1
    sig = (("in", (b, cin, h, w)), ("weight", (cout, cin, k, k)), ("out", (b, cout, ho, wo)))
    return ShapeProbe(signature=sig, volume=b * cin * h * w + cout * cin * k * k + b * cout * ho * wo,
                      flops=2.0 * b * cout * ho * wo * cin * k * k)


KERNELBENCH_CONV = {"BATCH": 128, "IN_CH": 64, "OUT_CH": 128, "H": 128, "W": 128, "KSIZE": 3}


def test_at_a_kernelbench_shape_every_generated_shape_stays_within_twice_its_volume_and_flops():
    # 16x the volume and a kernel size grown 3 -> 19 was 9 GB of output and a PFLOP on the H200 (a check timed
    # out at that one shape); at this scale every dim is already far past every tile
    base = conv_probe(KERNELBENCH_CONV)
    assert growth(base.volume) == LARGE_GROWTH and growth(1000) == COST_CAP
    plan = plan_unseen(KERNELBENCH_CONV, conv_probe, [16, 32], seed=5)
    for shape in plan.shapes:
        got = conv_probe(shape.dims)
        assert got.volume <= LARGE_GROWTH * base.volume and got.flops <= LARGE_GROWTH * base.flops, shape
    joint = next(s for s in plan.shapes if s.name == "all larger")
    assert all(joint.dims[k] > v for k, v in KERNELBENCH_CONV.items() if k != "KSIZE"), joint
    # the kernel size multiplies the FLOPs past the bound with the others visible: it grows with them smaller
    assert any(s.dims["KSIZE"] > 3 for s in plan.shapes), plan.shapes
    assert not plan.frozen, plan.frozen


def test_a_small_shape_keeps_the_interpreters_budget():
    """Elements may grow to a floor (a tiny shape still grows several dims); FLOPs, what makes the interpreter
    slow, by the factor alone: a convolution grown in every dim at once multiplied them by 237."""
    small = {"BATCH": 2, "IN_CH": 3, "OUT_CH": 8, "H": 12, "W": 13, "KSIZE": 3}
    base = conv_probe(small)
    plan = plan_unseen(small, conv_probe, [], seed=5)
    joint = next(s for s in plan.shapes if s.name == "all larger")
    assert sum(joint.dims[k] > v for k, v in small.items()) >= 4, joint
    assert {k for s in plan.shapes for k, v in small.items() if s.dims[k] > v} == set(small)  # each grows somewhere
    for shape in plan.shapes:
        got = conv_probe(shape.dims)
        assert got.volume <= max(COST_CAP * base.volume, MIN_BUDGET) and got.flops <= COST_CAP * base.flops, shape


def test_one_dim_at_1_with_the_others_visible_is_drawn():
    """Batch 1 is what inference serves: a GEMV path for one row forgot the bias and passed every larger
    size (red team 8, a04). One dim at 1 per shape, for the first two free dims that accept it."""
    from xe_forge.problem.unseen import plan_unseen, simple_probe

    visible = {"BATCH": 13, "IN": 72, "OUT": 80}
    plan = plan_unseen(visible, simple_probe(lambda d: True), [32], seed=3)
    units = [s for s in plan.shapes if s.name.endswith(" at 1")]
    assert [s.dims for s in units] == [{**visible, "BATCH": 1}, {**visible, "IN": 1}]
    assert plan.shapes[-1].name == "drawn in secret"
    assert all(sum(v == 1 for v in s.dims.values()) <= 1 for s in plan.shapes)  # never a one-element output
    rejected = plan_unseen(visible, simple_probe(lambda d: d["BATCH"] >= 2), [32])
    assert {s.name for s in rejected.shapes if s.name.endswith(" at 1")} == {"IN at 1", "OUT at 1"}
    stepped = plan_unseen(visible, simple_probe(lambda d: True), [32], steps={"BATCH": 13, "IN": 8})
    assert [s.name for s in stepped.shapes if s.name.endswith(" at 1")] == ["OUT at 1"]  # a declared multiple_of
