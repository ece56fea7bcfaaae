"""Profiling through the profiler executable: recorded outputs replayed by a fake `ncu` / `vtune` on
PATH. Every way the counters can be missing is a reason in the record, never an exception; the
profiled process runs in a temporary directory with the scrubbed environment and a timeout."""

from __future__ import annotations

import time

import pytest

from xe_forge.profile.collect import profile_source
from xe_forge.profile.ncu_csv import METRICS


def _profile(problem, device="cuda", **kw):
    return profile_source(problem.kernel.source, problem, device=device, target=kw.pop("target", "nvidia-sm90"), **kw)


def test_no_profiler_on_path_is_a_reason_not_a_crash(gemm_problem, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    record = _profile(gemm_problem)
    assert record.unavailable and "ncu is not installed or not on PATH" in record.unavailable
    assert record.kernels == [] and not record.available and record.blocked
    xpu = _profile(gemm_problem, device="xpu", target="intel-xe2")
    assert "vtune is not installed" in xpu.unavailable


def test_the_cpu_has_no_counters(gemm_problem):
    assert "interpreter" in _profile(gemm_problem, device="cpu").unavailable


@pytest.mark.parametrize(("recorded", "exit_code", "reason", "machine"), [
    ("ncu_err_perm.txt", 1, "ERR_NVGPUCTRPERM", True),
    ("ncu_err_library.txt", 1, "LibraryNotLoaded", True),
    ("ncu_no_kernels.txt", 0, "profiled no kernel", False),
    ("ncu_details_page_2025.3.1_real.txt", 0, "printed no counters", False),
])
def test_profiler_failures_become_the_reason(gemm_problem, fake, recorded, exit_code, reason, machine):
    fake.steps({"stdout": recorded, "exit": exit_code})
    record = _profile(gemm_problem)
    assert reason in record.unavailable and record.kernels == []
    assert record.blocked is machine  # the machine's refusal (the same for every kernel) or this run's


def test_recorded_counters_become_a_record_and_the_command_is_the_documented_one(gemm_problem, fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-the-profiled-process")
    fake.steps({"log": "ncu_raw_gemm_seed.csv", "stdout": "ncu_details_page_2025.3.1_real.txt"})
    record = _profile(gemm_problem)
    assert record.available and record.tool == "ncu 2025.3.1.0"
    assert {k.name for k in record.kernels} == {"_linear_bias_kernel", "_multiply_leaky_relu_kernel"}
    assert record.dominant.name == "_linear_bias_kernel"
    [call] = fake.calls
    argv = call["argv"]
    for flag in ("--csv", "--clock-control", "--profile-from-start", "--log-file", "--metrics", "--kernel-name"):
        assert flag in argv
    assert argv[argv.index("--clock-control") + 1] == "none" and argv[argv.index("--page") + 1] == "raw"
    assert argv[argv.index("--profile-from-start") + 1] == "off"
    assert argv[argv.index("--kernel-name") + 1] == r"regex:^(_linear_bias_kernel|_multiply_leaky_relu_kernel)($|\()"
    assert argv[argv.index("--metrics") + 1].split(",") == list(METRICS)
    assert argv[-2:][0] == "xe_forge.profile.runner"[:0] or argv[-3:-1] == ["-m", "xe_forge.profile.runner"]
    assert call["secrets"] == []  # the worker's environment scrubbing
    assert "xe-forge-profile-" in call["cwd"]  # its own temporary directory


def test_a_metric_this_ncu_lacks_is_dropped_and_the_rest_collected(gemm_problem, fake):
    fake.steps({"stdout": "ncu_err_unknown_metric.txt", "exit": 1}, {"log": "ncu_raw_gemm_seed.csv"})
    record = _profile(gemm_problem)
    assert record.available and "sm__pipe_tensor_cycles_active" in record.notes[0]
    first, second = (c["argv"] for c in fake.calls)
    dropped = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
    assert dropped in first[first.index("--metrics") + 1] and dropped not in second[second.index("--metrics") + 1]


def test_a_hang_is_killed_with_everything_it_started(gemm_problem, fake):
    fake.steps({"sleep": 60})
    start = time.monotonic()
    record = _profile(gemm_problem, timeout=2)
    assert time.monotonic() - start < 20
    assert "did not finish within 2 s" in record.unavailable
    profiler, child = fake.calls[0]["pid"], int(fake.calls_file.with_name("calls.jsonl.child").read_text())
    time.sleep(0.2)
    assert not _running(profiler) and not _running(child)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped (killed processes may linger as zombies)."""
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.slow  # starts a real profiled Python process (torch import): ~7 s on two shared cores
def test_a_kernel_that_fails_in_the_profiled_process_is_reported(gemm_problem, fake, tmp_path):
    broken = gemm_problem.kernel.source.replace("x = x.contiguous()", "raise RuntimeError('boom in forward')")
    problem = gemm_problem.model_copy(update={"variant": "ci"})
    fake.steps({"run_app": True, "stdout": "ncu_no_kernels.txt"})
    record = profile_source(broken, problem, device="cuda", target="nvidia-sm90", workdir=tmp_path / "work")
    # on this CPU machine the runner cannot open a CUDA device; on a GPU it would reach the RuntimeError:
    # either way the profiled process's own error is the reason
    assert record.unavailable.startswith("the kernel failed in the profiled process:") and not record.blocked
    assert list((tmp_path / "work").iterdir()) == []  # the temporary directory is gone


def test_vtune_report_becomes_records_with_bandwidth_as_a_share_of_peak(gemm_problem, fake):
    fake.steps({"stdout": "ncu_no_kernels.txt"}, {"stdout": "vtune_hotspots_gemm_seed.tsv"})
    record = _profile(gemm_problem, device="xpu", target="intel-xe2")
    assert record.available and record.tool == "vtune"
    assert [c["argv"][:2] for c in fake.calls] == [["-collect", "gpu-hotspots"], ["-report", "hotspots"]]
    gemm = record.dominant
    assert gemm.name == "_linear_bias_kernel" and len(record.kernels) == 2  # torch's fill kernel left out
    assert gemm.duration_us == pytest.approx(0.009612 / 3 * 1e6)  # warm-up 2 + 1 measured forward
    assert gemm.dram_throughput_pct == pytest.approx((412.3 + 36.1) / 608.0 * 100)
    assert gemm.l2_hit_rate_pct == pytest.approx(72.5) and gemm.sm_throughput_pct == pytest.approx(31.2)
    assert gemm.grid == [4096, 128, 1] and gemm.block == [256, 1, 1]


def test_vtune_without_counter_access_says_why(gemm_problem, fake):
    fake.steps({"stdout": "vtune_err_paranoid.txt", "exit": 1})
    record = _profile(gemm_problem, device="xpu", target="intel-xe2")
    assert "perf_stream_paranoid" in record.unavailable
