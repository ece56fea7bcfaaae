"""The limiter and the roofline position from a profile: each limiter from the counters that show it,
the YAML thresholds in force, and the roofline alone when no counters could be read."""

from __future__ import annotations

import pytest

from xe_forge.problem.roofline import problem_facts
from xe_forge.profile.feedback import Thresholds
from xe_forge.profile.limiter import diagnose, roofline_point
from xe_forge.profile.models import KernelRecord, ProfileRecord
from xe_forge.profile.ncu_csv import parse

from .conftest import RECORDED


def _record(name: str, names: set[str]) -> ProfileRecord:
    return ProfileRecord(tool="ncu", device="cuda", target="nvidia-sm90",
                         kernels=parse((RECORDED / name).read_text(), names))


def _kernel(**fields) -> ProfileRecord:
    return ProfileRecord(tool="ncu", device="cuda", target="nvidia-sm90",
                         kernels=[KernelRecord(name="_k", duration_us=100.0, **fields)])


def test_seed_gemm_with_idle_units_and_low_occupancy_is_latency_bound(gemm_problem):
    facts = problem_facts(gemm_problem, "nvidia-sm90")
    d = diagnose(_record("ncu_raw_gemm_seed.csv", {"_linear_bias_kernel", "_multiply_leaky_relu_kernel"}), facts)
    assert d.limiter == "latency-bound" and d.kernel == "_linear_bias_kernel"
    assert any("occupancy 18%" in r for r in d.reasons)
    point = d.roofline
    assert point.time_us == pytest.approx(951.712 + 11.104)
    assert point.ridge == pytest.approx(790e12 / 4300e9)
    assert point.achieved_tflops == pytest.approx(2 * 1024 * 8192 * 8192 / (962.816e-6) * 1e-12)
    assert point.fraction_of_roof == pytest.approx(point.achieved_tflops / min(790.0, facts.intensity * 4.3))
    assert point.measured_intensity == pytest.approx(facts.flops / (168_820_736 + 16_973_824 + 2 * 16_777_216))


def test_the_busy_threshold_comes_from_the_thresholds(gemm_problem):
    facts = problem_facts(gemm_problem, "nvidia-sm90")
    record = _record("ncu_raw_gemm_seed.csv", {"_linear_bias_kernel"})
    assert diagnose(record, facts, Thresholds(busy_pct=50)).limiter == "compute-bound"  # SM at 55%
    assert diagnose(record, facts, Thresholds(busy_pct=60)).limiter == "latency-bound"


def test_spill_traffic_makes_a_kernel_spill_bound(gemm_problem):
    d = diagnose(_record("ncu_raw_spills.csv", {"_linear_bias_kernel"}), problem_facts(gemm_problem, "nvidia-sm90"))
    assert d.limiter == "spill-bound" and "local-memory" in d.reasons[0]


def test_busy_device_memory_is_memory_bound(gemm_problem):
    d = diagnose(_record("ncu_raw_memory_two_launches.csv", {"_bias_gelu_kernel"}),
                 problem_facts(gemm_problem, "nvidia-sm90"))
    assert d.limiter == "memory-bound" and "device memory" in d.reasons[0]


@pytest.mark.parametrize(("fields", "limiter"), [
    ({"sm_throughput_pct": 40.0, "tensor_pipe_pct": 82.0, "dram_throughput_pct": 30.0}, "compute-bound"),
    ({"sm_throughput_pct": 70.0, "dram_throughput_pct": 91.0}, "memory-bound"),
    ({"sm_throughput_pct": 20.0, "dram_throughput_pct": 10.0, "spill_bytes_per_thread": 96}, "spill-bound"),
    # the compiler spilled, but the profiler counted no local traffic: the spill is off the hot path
    ({"sm_throughput_pct": 20.0, "dram_throughput_pct": 10.0, "spill_bytes_per_thread": 96,
      "local_memory_bytes": 0.0, "dram_bytes": 1e9}, "latency-bound"),
    ({"sm_throughput_pct": 20.0, "dram_throughput_pct": 10.0, "local_memory_bytes": 5e7, "dram_bytes": 1e9},
     "spill-bound"),
])
def test_limiter_of_a_kernel(gemm_problem, fields, limiter):
    assert diagnose(_kernel(**fields), problem_facts(gemm_problem, "nvidia-sm90")).limiter == limiter


def test_without_counters_the_roofline_alone_decides(gemm_problem):
    facts = problem_facts(gemm_problem, "nvidia-sm90")
    fast = ProfileRecord(tool="vtune", kernels=[KernelRecord(name="_k", duration_us=200.0)])  # ~690 TFLOP/s
    slow = ProfileRecord(tool="vtune", kernels=[KernelRecord(name="_k", duration_us=20_000.0)])
    assert diagnose(fast, facts).limiter == "compute-bound"
    assert diagnose(slow, facts).limiter == "latency-bound"
    unavailable = ProfileRecord(unavailable="ncu is not installed")
    d = diagnose(unavailable, facts)
    assert d.limiter == "unknown" and "ncu is not installed" in d.reasons[0] and d.roofline is None


def test_roofline_needs_a_time_and_uses_the_dtype_peak(gemm_problem):
    facts = problem_facts(gemm_problem, "nvidia-sm90")  # bench-gpu is bf16: the 16-bit peak
    assert roofline_point(facts, None) is None
    assert roofline_point(facts, 100.0).peak_tflops == 790.0
    fp32 = facts.model_copy(update={"dtype": "float32"})
    assert roofline_point(fp32, 100.0).peak_tflops == 67.0
