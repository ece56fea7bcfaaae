"""Launch-option validation (xe_forge/targets/options.py): options a toolchain would reject are
caught before compiling, with the toolchain's own reason (shared/reference/xpu-facts.md)."""

from __future__ import annotations

import pytest

from xe_forge.targets.base import Toolchain
from xe_forge.targets.options import grf_modes, validate_options, warp_size_keyword


def xpu(version: str) -> Toolchain:
    return Toolchain(name="triton-xpu", version=version)


CUDA = Toolchain(name="triton", version="3.6.0")


def problems(options, toolchain, **kw) -> dict[str, str]:
    return {p.option: p.message for p in validate_options(options, toolchain, **kw)}


@pytest.mark.parametrize(("version", "legal", "illegal"), [
    ("3.5.0", ["default", "small", "large", "auto"], ["128", "256", "512"]),
    ("3.6.0", ["default", "128", "256", "auto"], ["small", "large", "512"]),
    ("3.7.0", ["default", "128", "256", "auto"], ["large", "512"]),
    ("3.7.1+git123", ["128", "256"], ["512"]),
    ("3.7.2", ["default", "128", "256", "512", "auto"], ["small", "large"]),
    ("3.8.0", ["512"], ["large"]),
])
def test_grf_mode_names_by_version(version, legal, illegal):
    for mode in legal:
        assert problems({"grf_mode": mode}, xpu(version)) == {}, (version, mode)
    for mode in illegal:
        found = problems({"grf_mode": mode}, xpu(version))
        assert "Unknown grf_mode" in found["grf_mode"], (version, mode)
    assert set(grf_modes(xpu(version))) >= set(legal)


@pytest.mark.parametrize(("grf", "version"), [("256", "3.6.0"), ("512", "3.7.2"), ("large", "3.5.0")])
def test_large_grf_with_more_than_32_warps_is_rejected(grf, version):
    assert "cannot be used with num_warps > 32" in problems({"grf_mode": grf, "num_warps": 64}, xpu(version))["grf_mode"]
    assert problems({"grf_mode": grf, "num_warps": 32}, xpu(version)) == {}


def test_small_grf_allows_64_warps():
    assert problems({"grf_mode": "128", "num_warps": 64}, xpu("3.6.0"), max_warps=64) == {}


@pytest.mark.parametrize("warps", [3, 6, 12, 0, -4, 2.0, "8"])
def test_num_warps_must_be_a_power_of_two(warps):
    assert "power of two" in problems({"num_warps": warps}, xpu("3.7.2"))["num_warps"]


def test_num_warps_above_the_device_limit_is_rejected():
    assert "exceeds the device limit of 64" in problems({"num_warps": 128}, xpu("3.7.2"), max_warps=64)["num_warps"]
    assert problems({"num_warps": 64}, xpu("3.7.2"), max_warps=64) == {}
    assert "limit of 32" in problems({"num_warps": 64}, CUDA, max_warps=32)["num_warps"]


def test_sub_group_size_keyword_was_renamed_in_3_6():
    assert warp_size_keyword(xpu("3.5.0")) == "threads_per_warp"
    assert warp_size_keyword(xpu("3.6.0")) == "warp_size"
    assert problems({"threads_per_warp": 16}, xpu("3.5.0")) == {}
    assert "use threads_per_warp" in problems({"warp_size": 16}, xpu("3.5.0"))["warp_size"]
    assert problems({"warp_size": 16}, xpu("3.6.0")) == {}
    assert "use warp_size" in problems({"threads_per_warp": 16}, xpu("3.6.0"))["threads_per_warp"]


def test_sub_group_size_must_be_one_the_device_has():
    assert "not supported" in problems({"warp_size": 8}, xpu("3.7.2"), warp_sizes=(16, 32))["warp_size"]
    assert problems({"warp_size": 8}, xpu("3.7.2"), warp_sizes=(8, 16, 32)) == {}


@pytest.mark.parametrize("option", ["grf_mode", "threads_per_warp", "generate_native_code"])
def test_xpu_only_options_are_rejected_on_upstream_triton(option):
    message = problems({option: "256" if option == "grf_mode" else 1}, CUDA)[option]
    assert f"Keyword argument {option} was specified but unrecognised" in message


@pytest.mark.parametrize("option", ["maxnreg", "launch_pdl"])
def test_cuda_only_options_are_rejected_on_triton_xpu(option):
    message = problems({option: 128}, xpu("3.7.2"))[option]
    assert f"Keyword argument {option} was specified but unrecognised" in message and "CUDA-only" in message


@pytest.mark.parametrize("option", ["enable_fp_fusion", "launch_cooperative_grid", "num_stages", "num_ctas"])
def test_options_both_backends_define_are_legal_on_both(option):
    # enable_fp_fusion and launch_cooperative_grid are XPUOptions fields as well as CUDAOptions ones
    assert problems({option: 1}, xpu("3.7.2")) == {}
    assert problems({option: 1}, CUDA) == {}


def test_warp_size_on_cuda_must_be_32():
    assert problems({"warp_size": 32}, CUDA) == {}  # a CUDAOptions field: accepted
    assert "must be 32" in problems({"warp_size": 16}, CUDA)["warp_size"]


def test_a_typical_intel_gemm_config_is_legal():
    options = {"num_warps": 32, "num_stages": 2, "grf_mode": "256", "warp_size": 16}
    assert problems(options, xpu("3.7.2"), max_warps=64) == {}


def test_every_problem_is_reported_not_only_the_first():
    found = problems({"num_warps": 6, "grf_mode": "large", "maxnreg": 64}, xpu("3.6.0"))
    assert set(found) == {"num_warps", "grf_mode", "maxnreg"}
