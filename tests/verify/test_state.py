"""Issue 26, classes 6 and 8: state after every call, tensor data kept off the host, and references
that cannot judge anything.

After every checked call the candidate's state (each entry, sent like an output) is compared
elementwise in the reference process with the reference's own state after the same call; `.item()` and other
exits of tensor data to host Python are refused on the CPU too; a reference whose output is the same
for every input and weights tried makes the verdict "cannot verify" (exit 1), never passed.
"""

from __future__ import annotations

import torch

from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.state_check import Expected, state_findings
from xe_forge.verify.static import check_source

from .helpers import failed, finding, problem, source, unguarded


def test_a_weight_repacked_in_place_fails_although_the_output_is_right(evaluator: Evaluator, linear):
    assert check_source(source("state/repack_weight.py")).findings == []
    verdict = evaluator.evaluate(source("state/repack_weight.py"), linear)
    failed(verdict, "correctness")
    main = verdict.correctness[0]
    # every output is right, but the same call made twice: nothing reloaded, it runs on the repacked weight
    assert all(c.passed for t in main.trials if t.label != "the same call again" for c in t.comparisons)
    assert "linear.weight" in finding(verdict, "state").message


def test_the_comparison_tells_a_transpose_from_the_same_tensor():
    w = torch.randn(6, 4)
    want = Expected({"w": w}, {"w": w}, set(), 1e-4, 1e-4)
    assert state_findings({"w": w.clone()}, want, "t0") == ([], [])
    repacked = w.t().contiguous().view(6, 4)  # the same values, another order
    assert sorted(repacked.flatten().tolist()) == sorted(w.flatten().tolist())
    found, _ = state_findings({"w": repacked}, want, "t0")
    assert found and found[0].check == "state"


def test_blocks_swapped_a_fingerprint_period_apart_and_one_concentrated_change_are_seen():
    """Red team 2, root cause 8: the old fingerprint's position weights repeated every 1021 elements, and its
    bound was the tolerance summed over the tensor (~0.6 for an 80x72 weight)."""
    w = torch.randn(80, 72)
    want = Expected({"w": w}, {"w": w}, set(), 1e-4, 1e-4)
    swapped = w.clone().view(-1)
    swapped[:1021], swapped[1021:2042] = w.view(-1)[1021:2042].clone(), w.view(-1)[:1021].clone()
    assert state_findings({"w": swapped.view(80, 72)}, want, "t0")[0]
    bumped = w.clone()
    bumped[3, 5] += 0.3
    assert state_findings({"w": bumped}, want, "t0")[0]
    honest = w * (1 + 5e-5)  # within the tolerance everywhere
    assert state_findings({"w": honest}, want, "t0") == ([], [])


def test_a_buffer_left_as_loaded_fails_and_so_does_one_changed_otherwise():
    loaded, updated = torch.zeros(4), torch.full((4,), 0.1)
    want = Expected({"running_mean": updated}, {"running_mean": loaded}, {"running_mean"}, 1e-4, 1e-4)
    assert state_findings({"running_mean": updated.clone()}, want, "t0") == ([], [])
    found, notes = state_findings({"running_mean": loaded.clone()}, want, "t0")
    assert found and "not tracked" in found[0].message and not notes
    found, _ = state_findings({"running_mean": torch.ones(4)}, want, "t0")
    assert found


def test_item_and_host_arithmetic_are_refused_on_the_cpu(evaluator: Evaluator, linear):
    assert {f.check for f in check_source(source("state/item_host_math.py")).findings} == {"host-compute"}
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("state/item_host_math.py"), linear)
    failed(verdict, "audit")
    assert "item" in finding(verdict, "host-compute").message


def test_a_reference_constant_in_its_inputs_and_weights_cannot_verify(evaluator: Evaluator):
    for path in ("zeros/good.py", "zeros/writes_constant.py"):
        verdict = evaluator.evaluate(source(path), problem("zeros"))
        assert not verdict.passed and verdict.stage_failed == "unverifiable", verdict.feedback()
        assert not verdict.bad_input, "the problem runs: exit 1, not 2"
        assert "cannot verify" in finding(verdict, "unverifiable").message


def test_a_buffer_the_fp32_reference_misses_is_judged_by_the_float64_truth(evaluator: Evaluator):
    """The fp32 contract holds for state as for outputs: where the fp32 reference's own update cancels
    (a running mean of large GEMM outputs in CI; here a total passed through 1e8), a candidate whose buffer
    matches the float64 reference passes, and one that leaves it untouched still fails."""
    verdict = evaluator.evaluate(source("cancel/good.py"), problem("cancel"))
    assert verdict.passed, verdict.feedback()
    skipped = source("cancel/good.py").replace("tl.store(t_ptr + cols, tl.load(t_ptr + cols, mask=cm, other=0.0) + acc",
                                               "tl.store(t_ptr + cols, tl.load(t_ptr + cols, mask=cm, other=0.0) + 0.0 * acc")
    verdict = evaluator.evaluate(skipped, problem("cancel"))
    failed(verdict, "correctness")
    assert "total" in finding(verdict, "state").message
