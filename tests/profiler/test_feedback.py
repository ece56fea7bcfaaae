"""From a limiter to the next candidate: the YAML's preferences per target, the prompt block (only
when a profile exists), the plan, and the rules engine's candidate order."""

from __future__ import annotations

import pytest

from xe_forge.kb import load_kb
from xe_forge.problem.roofline import problem_facts
from xe_forge.profile.feedback import load_guides, preferences, render_feedback, steer_plan
from xe_forge.profile.limiter import diagnose
from xe_forge.profile.models import ProfileRecord
from xe_forge.profile.ncu_csv import parse
from xe_forge.profile.steer import SteeredRules, order
from xe_forge.prompting import render
from xe_forge.proposers.base import Proposal, StageRequest
from xe_forge.proposers.rules.proposer import RulesProposer
from xe_forge.stages import load_stages
from xe_forge.targets.base import Toolchain

from .conftest import EXAMPLE, RECORDED

CUDA = Toolchain(name="triton", version="3.6.0")


def test_every_limiter_the_classifier_can_name_has_a_guide():
    from typing import get_args

    from xe_forge.profile.models import Limiter

    guides = load_guides()
    assert set(get_args(Limiter)) == set(guides.limiters)
    stages = load_stages()
    for guide in guides.limiters.values():
        assert set(guide.stages) <= set(stages)
        for v in guide.variants:
            assert v.recipe in stages[v.stage].recipes  # a variant the stage may actually use


@pytest.mark.parametrize(("target", "params"), [("intel-xe2", {"grf_mode": "256"}), ("intel-xe-hpc", {"grf_mode": "256"}),
                                                ("nvidia-sm90", {"num_stages": 2})])
def test_spills_ask_for_a_larger_grf_on_intel_and_fewer_stages_on_hopper(target, params):
    [variant] = preferences("spill-bound", target).variants
    assert variant.recipe == "launch-options" and variant.params == params


def test_memory_bound_prefers_fusion_and_block_io_stages():
    prefs = preferences("memory-bound", "intel-xe2")
    assert prefs.stages[:3] == ["fusion", "memory_access", "block_io"] and prefs.variants == []


def _seed_profile(gemm_problem):
    record = ProfileRecord(tool="ncu 2025.3.1", device="cuda", target="nvidia-sm90", variant="bench-gpu",
                           kernels=parse((RECORDED / "ncu_raw_gemm_seed.csv").read_text(),
                                         {"_linear_bias_kernel", "_multiply_leaky_relu_kernel"}))
    return record, diagnose(record, problem_facts(gemm_problem, "nvidia-sm90"))


def test_feedback_block_names_the_limiter_the_numbers_and_what_to_try(gemm_problem):
    record, diagnosis = _seed_profile(gemm_problem)
    text = render_feedback(record, diagnosis)
    assert "limiter: latency/occupancy-bound" in text
    assert "kernel _linear_bias_kernel: 951.7 us, 168 registers/thread, occupancy 18%, L2 hit 85%, grid 16x128x1" in text
    assert "% of the roof at" in text and "raise num_warps" in text


def test_prompts_get_a_profile_section_only_when_there_is_a_profile(gemm_problem):
    stage = load_stages()["device_tuning"]
    common = dict(stage=stage, target="nvidia-sm90", failure="wrong output", previous="code", task="the task")
    assert "profiler" not in render("refine.j2", **common)  # as batch/port.py renders it: no profile at all
    assert "profiler" not in render("refine.j2", **common, profile="")
    with_profile = render("refine.j2", **common, profile="limiter: spill-bound")
    assert "## What the profiler measured on the current best kernel\nlimiter: spill-bound" in with_profile
    task = dict(stage=stage, target="nvidia-sm90", toolchain="triton 3.6", context="", issues=[], knowledge="",
                reference="ref", code="code", attempts=[], allowance="")
    assert "profiler" not in render("stage_optimize.j2", **task, profile="")
    assert "## Why the current kernel is slow (profiler)\nlimiter: memory-bound" in render(
        "stage_optimize.j2", **task, profile="limiter: memory-bound")


def test_plan_puts_the_limiters_stages_first_when_they_can_run():
    prefs = preferences("spill-bound", "nvidia-sm90")
    plan = steer_plan(["dtype", "persistent", "autotuning"], prefs, can_serve=lambda s: s != "fusion")
    assert plan == ["device_tuning", "autotuning", "dtype", "persistent"]
    memory = steer_plan(["dtype", "device_tuning"], preferences("memory-bound", "nvidia-sm90"),
                        can_serve=lambda s: s in ("dtype", "device_tuning", "persistent"))
    assert memory == ["dtype", "persistent", "device_tuning"]  # fusion cannot run in rules mode: not added


def _p(recipe: str, entry: str) -> Proposal:
    return Proposal(code=f"# {recipe} {entry}", recipe=recipe, entry_id=entry)


def test_order_puts_variants_then_preferred_recipes_first_and_keeps_the_rest():
    prefs = preferences("compute-bound", "nvidia-sm90")  # recipes: drop-dot-upcast, tile-sizes, exp2, autotune
    got = order([_p("launch-options", "a"), _p("group-swizzle", "b"), _p("tile-sizes", "c"),
                 _p("launch-options", "profile:compute-bound:x")], prefs)
    assert [p.entry_id for p in got] == ["profile:compute-bound:x", "c", "a", "b"]


def test_the_limiter_changes_the_rules_engines_next_candidate():
    source = (EXAMPLE / "kernel.py").read_text()
    stage = load_stages()["device_tuning"]
    request = StageRequest(stage=stage, code=source, reference="", target="nvidia-sm90")
    rules = RulesProposer(load_kb(), "nvidia-sm90", CUDA)
    unsteered = rules.candidates(request)
    assert unsteered, "the rules engine has device_tuning candidates for this GEMM"
    notes = []
    spill = SteeredRules(rules, preferences("spill-bound", "nvidia-sm90"), "nvidia-sm90", CUDA, notes=notes)
    first = spill.next(request)
    assert first.entry_id == "profile:spill-bound:launch-options" and "num_stages=2" in first.code
    assert first.code != unsteered[0].code
    [note] = notes
    assert note.changed_first and note.unsteered[0] != note.steered[0] and len(note.steered) == len(unsteered) + 1
    assert spill.skips is rules.skips
    spill.reset()
    assert spill.next(request).entry_id == first.entry_id  # a fresh stage starts the steered queue again
