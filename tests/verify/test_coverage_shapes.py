"""Unseen shapes reach the sizes a kernel's branches and caps turn on (red team 2, root cause 2).

Odd sizes alone never run a `K % BK == 0` fast path (a @triton.heuristics EVEN_K branch) or a tail
loop that drops the last full block; shapes within a few times the visible one never cross a grid
capped at 1024 rows or a single block capped at 4096 columns. So the plan has one shape with every
growing dim an exact multiple of the kernel's tiles, and each dim once far past the usual caps with
the other dims at their smallest (a row's width past 8192, other dims past 1024), within a size bound.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.problem.unseen import LARGE_CAP, ShapeProbe, plan_unseen
from xe_forge.verify.evaluate import Evaluator, declared_allowance

from .helpers import failed

CORPUS = Path(__file__).resolve().parents[2] / "redteam" / "red2"


def _linear(d):
    """nn.Linear(IN, OUT) on x of (BATCH, IN): the shapes and elements its tensors hold."""
    b, i, o = d["BATCH"], d["IN"], d["OUT"]
    sig = (("in", (b, i)), ("weight", (o, i)), ("bias", (o,)), ("out", (b, o)))
    return ShapeProbe(signature=sig, volume=sum(math.prod(s) for _, s in sig))


def _rows(d):
    """A row reduction of x (BATCH, N): its output is a vector of BATCH entries."""
    sig = (("in", (d["BATCH"], d["N"])), ("out", (d["BATCH"],)))
    return ShapeProbe(signature=sig, volume=d["BATCH"] * d["N"] + d["BATCH"])


def test_one_shape_has_every_dim_an_exact_multiple_of_the_kernels_tiles():
    plan = plan_unseen({"BATCH": 13, "IN": 72, "OUT": 80}, _linear, [16, 32])
    aligned = [s for s in plan.shapes if all(v % 32 == 0 for v in s.dims.values())]
    assert aligned and all(a.dims["IN"] > 72 for a in aligned), [s.dims for s in plan.shapes]
    odd = [s for s in plan.shapes if s.dims["IN"] % 2]
    assert odd, "the odd sizes stay beside the aligned ones"


def test_aligned_sizes_fall_back_to_a_smaller_tile_within_the_bound():
    plan = plan_unseen({"BATCH": 13, "IN": 72, "OUT": 80}, _linear, [32, 64, 1024])
    aligned = next(s for s in plan.shapes if s.name.startswith("all multiples"))
    assert aligned.name == "all multiples of 64" and all(v % 64 == 0 for v in aligned.dims.values())


def test_each_dim_goes_once_far_past_the_usual_caps_with_the_others_smallest():
    plan = plan_unseen({"BATCH": 13, "IN": 72, "OUT": 80}, _linear, [32])
    far = {s.name.split()[0]: s.dims for s in plan.shapes if "others smallest" in s.name}
    assert far["IN"]["IN"] > 8192, "an input row's width past 8192"
    for dim in ("BATCH", "OUT"):  # rows, output columns: programs in the interpreter (slow)
        assert 1024 < far[dim][dim] < 4096, far[dim]
    for dims in far.values():
        assert _linear(dims).volume <= LARGE_CAP and sorted(dims.values())[:2] == [2, 2]


def test_a_row_count_stays_a_row_count_even_where_an_output_vector_holds_it():
    plan = plan_unseen({"BATCH": 11, "N": 150}, _rows, [64])
    far = {s.name.split()[0]: s.dims for s in plan.shapes if "others smallest" in s.name}
    assert far["N"]["N"] > 8192 and 1024 < far["BATCH"]["BATCH"] < 4096


def test_a_declared_multiple_of_is_kept_in_the_far_and_aligned_shapes():
    plan = plan_unseen({"BATCH": 13, "IN": 72, "OUT": 80}, _linear, [32], steps={"IN": 24})
    assert all(s.dims["IN"] % 24 == 0 for s in plan.shapes)
    assert any(s.dims["IN"] > 8192 for s in plan.shapes)


def check_file(path: str, ev: Evaluator):
    """`xe-forge check --device cpu` on one red team 2 file."""
    kernel = CORPUS / path
    problem = load_problem(kernel, kernel.parent / "ref_pytorch.py", kernel.parent / "spec.yaml", None)
    return ev.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem), unseen=True,
                       time_it=False)


@pytest.fixture(scope="module")
def cli_like():
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


@pytest.mark.slow
@pytest.mark.parametrize("path", ["linear_lrelu/atk_exact_multiple_tail.py", "linear_lrelu/atk_even_k_branch.py"])
def test_a_branch_only_aligned_sizes_take_fails_at_the_aligned_shape(path: str, cli_like: Evaluator):
    verdict = check_file(path, cli_like)
    failed(verdict, "unseen")
    bad = next(r for r in verdict.correctness if not r.passed)
    assert all(v % 32 == 0 for v in bad.dims.values()), bad.dims


@pytest.mark.slow
@pytest.mark.parametrize("path", ["linear_lrelu/atk_grid_cap.py", "softmax/atk_width_cap.py",
                                  "rowsum/atk_suppress_exit.py"])
def test_a_cap_past_the_visible_sizes_fails_at_a_far_shape(path: str, cli_like: Evaluator):
    verdict = check_file(path, cli_like)
    failed(verdict, "unseen")
    bad = next(r for r in verdict.correctness if not r.passed)
    assert max(bad.dims.values()) > 1024, bad.dims


@pytest.mark.slow
def test_the_even_k_branch_of_an_honest_launcher_runs_and_passes(cli_like: Evaluator):
    verdict = check_file("linear_lrelu/honest_launcher_heuristics.py", cli_like)
    assert verdict.passed, verdict.findings
    assert any(r.dims.get("IN_FEAT", 1) % 16 == 0 for r in verdict.correctness[1:]), "EVEN_K=True ran"


def test_a_bool_constexpr_that_never_flips_is_named_in_the_notes():
    """EVEN_K False at every checked shape: its True branch never ran, and the verdict says so."""
    from types import SimpleNamespace

    import triton.language as tl

    from xe_forge.verify.launch_record import LaunchLog, one_sided_flags
    from xe_forge.verify.models import CorrectnessReport

    def _k(x, K, BK: tl.constexpr, EVEN_K: tl.constexpr):
        pass

    jit = SimpleNamespace(fn=_k)
    reports = []
    for k in (72, 99, 96):
        log = LaunchLog()
        log.record(jit, (None, k), {"BK": 16, "EVEN_K": k % 16 == 0})
        assert 16 in log.tiles
        reports.append(CorrectnessReport(variant="v", dtype="float32", rtol=1e-4, atol=1e-4, flags=sorted(log.flags)))
    assert one_sided_flags(reports) == []
    notes = one_sided_flags(reports[:2])
    assert len(notes) == 1 and "_k.EVEN_K was False" in notes[0]
