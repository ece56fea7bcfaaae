"""Bounded lowering cost: the autotuning budget (fake clock, fake autotuner) and the lowering cache."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from recorded import lowering, reference, spec

from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.lower import service
from xe_forge.proposers.lower.budget import SKIPPED, Budget, inductor_budget, measurement, patch, selection
from xe_forge.proposers.lower.fast_shapes import requests
from xe_forge.proposers.lower.models import Lowering


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Choice:
    def __init__(self, name: str, cost: float, time: float) -> None:
        self.name, self.cost, self.time = name, cost, time


def fake_selector(clock: Clock):
    """Inductor's shape: a selection measures its candidates one by one and keeps the fastest."""

    class Selector:
        measured: list[str] = []

        @classmethod
        def benchmark_choices(cls, choices, args):
            return {c: cls.benchmark_choice(c, args) for c in choices}

        @classmethod
        def benchmark_choice(cls, choice, args):
            clock.now += choice.cost
            cls.measured.append(choice.name)
            return choice.time

    return Selector


def select(selector, choices):
    timings = selector.benchmark_choices(choices, None)
    return min(timings, key=timings.get).name, timings


def test_past_the_budget_each_selection_keeps_the_best_found_so_far() -> None:
    clock = Clock()
    selector = fake_selector(clock)
    budget = Budget(10.0, clock=clock)
    with contextlib.ExitStack() as stack:
        assert patch(selector, "benchmark_choices", lambda f: selection(budget, f), stack)
        assert patch(selector, "benchmark_choice", lambda f: measurement(budget, f), stack)
        first = [Choice("a", 4, 3.0), Choice("b", 4, 1.0), Choice("c", 4, 2.0), Choice("d", 4, 0.5)]
        best, timings = select(selector, first)
        # a and b fit in 10 s, c starts at 8 s (still inside), d would start past it: not measured
        assert selector.measured == ["a", "b", "c"] and timings[first[3]] == SKIPPED and best == "b"
        second = [Choice("e", 4, 9.0), Choice("f", 1, 0.1)]
        best, timings = select(selector, second)
        assert best == "e" and timings[second[1]] == SKIPPED  # the first candidate is always measured
    assert budget.spent and budget.measured == 4 and budget.skipped == 2
    assert "2 candidates not measured" in budget.summary()
    clock.now = 0
    select(selector, [Choice("g", 100, 1.0), Choice("h", 1, 0.5)])  # patches are gone: everything measured
    assert selector.measured[-2:] == ["g", "h"]


def test_a_budget_never_spent_measures_everything() -> None:
    clock = Clock()
    selector = fake_selector(clock)
    budget = Budget(60.0, clock=clock)
    with contextlib.ExitStack() as stack:
        patch(selector, "benchmark_choices", lambda f: selection(budget, f), stack)
        patch(selector, "benchmark_choice", lambda f: measurement(budget, f), stack)
        best, timings = select(selector, [Choice(str(i), 1, 10 - i) for i in range(8)])
    assert best == "7" and SKIPPED not in timings.values() and not budget.spent


def test_inductors_own_measuring_entry_points_are_the_ones_patched() -> None:
    from torch._inductor import select_algorithm
    from torch._inductor.runtime import triton_heuristics

    before = (select_algorithm.AlgorithmSelectorCache.__dict__["benchmark_choice"],
              triton_heuristics.CachingAutotuner.__dict__["bench"])
    with inductor_budget(Budget(5.0)) as patched:
        assert set(patched) == {"AlgorithmSelectorCache.benchmark_choices", "AlgorithmSelectorCache.benchmark_choice",
                                "CachingAutotuner.benchmark_all_configs", "CachingAutotuner.bench"}
        assert select_algorithm.AlgorithmSelectorCache.__dict__["benchmark_choice"] is not before[0]
    after = (select_algorithm.AlgorithmSelectorCache.__dict__["benchmark_choice"],
             triton_heuristics.CachingAutotuner.__dict__["bench"])
    assert after == before


class FakeDevice:
    kind = "cuda"

    def properties(self):
        class P:
            name = "NVIDIA H200"

        return P()

    def toolchain(self):
        return "triton 3.6"

    def lock(self):
        from xe_forge.targets.device_lock import NoLock

        return NoLock()


@pytest.fixture
def lowered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """lower_problem with a fake GPU and a fake lowering process that counts its runs."""
    monkeypatch.setenv("XE_FORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(service, "gpu_device", lambda name="auto": FakeDevice())
    runs: list[dict] = []

    def run_job(job_path: Path, out: Path, timeout: float, name: str, dtype: str) -> Lowering:
        from xe_forge.proposers.lower.runner import LowerJob

        job = LowerJob.model_validate_json(job_path.read_text())
        runs.append(job.model_dump())
        record = lowering("12_Gemm_Multiply_LeakyReLU")
        spent = job.budget_s is not None and job.budget_s < 30
        return record.model_copy(update={"budget_s": job.budget_s, "budget_spent": spent})

    monkeypatch.setattr(service, "_run_job", run_job)
    return runs


def problem_with(tmp_path: Path, name: str = "12_Gemm_Multiply_LeakyReLU", spec_text: str | None = None,
                 source: str | None = None):
    ref = tmp_path / f"{name}.py"
    ref.write_text(source or reference(name).read_text())
    spec_path = tmp_path / f"{name}.yaml"
    spec_path.write_text(spec_text or spec(name).read_text())
    return load_problem(ref, ref, spec_path)


def test_a_lowering_is_cached_by_reference_shapes_dtype_and_toolchain(lowered, tmp_path: Path) -> None:
    problem = problem_with(tmp_path)
    service.lower_problem(problem)
    service.lower_problem(problem)
    assert len(lowered) == 1  # the second is a cache hit
    assert lowered[0]["budget_s"] == 60.0
    text = spec("12_Gemm_Multiply_LeakyReLU").read_text()
    service.lower_problem(problem_with(tmp_path, spec_text=text.replace("BATCH: 5, FEAT: 33", "BATCH: 6, FEAT: 34")))
    assert len(lowered) == 1  # another unseen shape: the lowered signature is the same
    service.lower_problem(problem_with(tmp_path, spec_text=text.replace("BATCH: 37, FEAT: 70", "BATCH: 38, FEAT: 70")))
    assert len(lowered) == 2  # another shape signature
    service.lower_problem(problem_with(tmp_path, spec_text=text.replace("dtype: float32", "dtype: bfloat16")))
    assert len(lowered) == 3  # another dtype
    service.lower_problem(problem_with(tmp_path, source=reference("12_Gemm_Multiply_LeakyReLU").read_text() + "\n#"))
    assert len(lowered) == 4  # another reference


def test_a_lowering_cut_short_by_its_budget_is_redone_with_a_larger_one(lowered, tmp_path: Path) -> None:
    problem = problem_with(tmp_path)
    first = service.lower_problem(problem, budget_s=10.0)
    assert first.budget_spent
    service.lower_problem(problem, budget_s=10.0)
    assert len(lowered) == 1  # the same budget would not do better
    service.lower_problem(problem, budget_s=60.0)
    assert len(lowered) == 2
    service.lower_problem(problem, budget_s=10.0)
    assert len(lowered) == 2  # the complete one serves any budget


def test_a_failed_lowering_is_not_cached(lowered, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "_run_job", lambda *a: Lowering(problem="p", dtype="float32", error="boom"))
    problem = problem_with(tmp_path)
    assert not service.lower_problem(problem).ok
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_more_fast_paths_are_lowered_at_their_own_shapes(lowered, tmp_path: Path) -> None:
    problem = problem_with(tmp_path)
    wanted = requests(problem, ["BATCH=64", "ci", "BATCH=64"], tmp_path)
    assert [r.label for r in wanted] == ["ci", "BATCH=64"]  # duplicates (and the problem's own) once
    service.lower_requests(problem, wanted)
    assert len(lowered) == 2 and lowered[0]["variant"] in (None, "ci") and lowered[1]["variant"] == "fast-1"
    assert lowered[1]["spec"]["variants"]["fast-1"][0]["dims"] == {"BATCH": 64, "FEAT": 70}


def test_without_a_spec_more_fast_paths_rewrite_the_module_constants(tmp_path: Path) -> None:
    ref = tmp_path / "p.py"
    ref.write_text(reference("12_Gemm_Multiply_LeakyReLU").read_text())
    problem = load_problem(ref, ref, None)
    (main, extra) = requests(problem, ["batch_size=64"], tmp_path / "shapes")
    assert "batch_size = 64" in extra.reference_source and Path(extra.reference_path).is_file()
    assert main.reference_path == str(ref)
