"""Reading `ncu --csv --page raw` output: units, separators, launches merged per kernel, only the
candidate's Triton kernels, and anything that is not raw-page CSV refused rather than misread."""

from __future__ import annotations

import pytest

from xe_forge.profile import ncu_csv
from xe_forge.profile.ncu_csv import NcuCsvError, parse

from .conftest import RECORDED

SEED = {"_linear_bias_kernel", "_multiply_leaky_relu_kernel"}


def test_reads_every_field_of_both_kernels_with_units_and_separators():
    records = {r.name: r for r in parse((RECORDED / "ncu_raw_gemm_seed.csv").read_text(), SEED)}
    gemm = records["_linear_bias_kernel"]
    assert gemm.duration_us == pytest.approx(951.712)  # "951,712" nsecond
    assert gemm.sm_throughput_pct == pytest.approx(55.18) and gemm.dram_throughput_pct == pytest.approx(9.42)
    assert gemm.tensor_pipe_pct == pytest.approx(38.27) and gemm.achieved_occupancy_pct == pytest.approx(17.96)
    assert gemm.registers_per_thread == 168 and gemm.shared_mem_per_block == 49152
    assert gemm.l2_hit_rate_pct == pytest.approx(84.61)
    assert gemm.dram_bytes == 168_820_736 + 16_973_824 and gemm.local_memory_bytes == 0
    assert gemm.grid == [16, 128, 1] and gemm.block == [128, 1, 1] and gemm.launches == 1
    assert records["_multiply_leaky_relu_kernel"].grid == [8192, 1, 1]


def test_launches_of_one_kernel_add_up_and_other_kernels_are_left_out():
    text = (RECORDED / "ncu_raw_memory_two_launches.csv").read_text()
    [k] = parse(text, {"_bias_gelu_kernel"})
    assert k.launches == 2
    assert k.duration_us == pytest.approx(17.92 + 18.40)
    assert k.dram_bytes == 4 * 33_554_432
    weighted = (86.40 * 17.92 + 84.20 * 18.40) / (17.92 + 18.40)
    assert k.dram_throughput_pct == pytest.approx(weighted)
    everything = [r.name for r in parse(text, None)]
    assert everything[0] == "_bias_gelu_kernel" and everything[1].startswith("void at::native::vectorized_elementwise")


def test_several_forwards_are_reported_per_forward():
    [k] = parse((RECORDED / "ncu_raw_memory_two_launches.csv").read_text(), {"_bias_gelu_kernel"}, forwards=2)
    assert k.launches == 1 and k.duration_us == pytest.approx((17.92 + 18.40) / 2)


@pytest.mark.parametrize(("unit", "value", "us"), [("usecond", "12.5", 12.5), ("msecond", "1.25", 1250.0),
                                                   ("ns", "2,000", 2.0), ("", "3,000", 3.0)])
def test_duration_units(unit, value, us):
    text = ('"ID","Kernel Name","gpu__time_duration.sum","launch__registers_per_thread"\n'
            f'"","","{unit}",""\n"0","k","{value}","n/a"\n')
    [k] = parse(text, {"k"})
    assert k.duration_us == pytest.approx(us)
    assert k.registers_per_thread is None  # n/a is absent evidence, not zero


def test_a_kernel_name_with_a_parameter_list_matches_its_function_name():
    text = '"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n"0","_k(float*, int)","1000"\n"1","_k2","5"\n'
    assert [r.name for r in parse(text, {"_k"})] == ["_k"]


@pytest.mark.parametrize("name", ["ncu_details_page_2025.3.1_real.txt", "ncu_err_perm.txt", "ncu_no_kernels.txt"])
def test_output_without_a_raw_csv_header_is_refused(name):
    with pytest.raises(NcuCsvError):
        parse((RECORDED / name).read_text(), SEED)


def test_the_requested_metrics_cover_every_record_field_the_parser_fills():
    assert ncu_csv.DURATION in ncu_csv.METRICS
    assert len(set(ncu_csv.METRICS)) == len(ncu_csv.METRICS)
    assert {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct",
            "launch__registers_per_thread", "sm__warps_active.avg.pct_of_peak_sustained_active"} <= set(ncu_csv.METRICS)
