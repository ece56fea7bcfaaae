"""Launch-option validation (xe_forge/targets/options.py over the knowledge base's option table):
options a toolchain would reject are caught before compiling, each naming the entry that says why."""

from __future__ import annotations

import pytest

from xe_forge.targets.base import Toolchain
from xe_forge.targets.options import grf_modes, validate_options, warp_size_keyword


def xpu(version: str) -> Toolchain:
    return Toolchain(name="triton-xpu", version=version)


CUDA = Toolchain(name="triton", version="3.6.0")


def problems(options, toolchain, target=None, **kw) -> dict[str, str]:
    target = target or ("nvidia-sm90" if toolchain.name == "triton" else "intel-xe2")
    return {p.option: p.message for p in validate_options(options, toolchain, target=target, **kw)}


def entries(options, toolchain, target="intel-xe2") -> set[str | None]:
    return {p.entry_id for p in validate_options(options, toolchain, target=target)}


@pytest.mark.parametrize(("version", "legal", "illegal", "entry"), [
    ("3.5.0", ["default", "small", "large", "auto"], ["128", "256", "512"], "xpu-grf-mode-names-pre-3-6"),
    ("3.6.0", ["default", "128", "256", "auto"], ["small", "large", "512"], "xpu-grf-mode-names-3-6"),
    ("3.7.0", ["default", "128", "256", "auto"], ["large", "512"], "xpu-grf-mode-names-3-6"),
    ("3.7.1+git123", ["128", "256"], ["512"], "xpu-grf-mode-names-3-6"),
    ("3.7.2", ["default", "128", "256", "512", "auto"], ["small", "large"], "xpu-grf-mode-names-3-7-2"),
    ("3.8.0", ["512"], ["large"], "xpu-grf-mode-names-3-7-2"),
])
def test_grf_mode_names_by_version(version, legal, illegal, entry):
    for mode in legal:
        assert problems({"grf_mode": mode}, xpu(version)) == {}, (version, mode)
    for mode in illegal:
        found = problems({"grf_mode": mode}, xpu(version))
        assert found["grf_mode"].startswith(f"[{entry}]"), (version, mode, found)
    assert set(grf_modes(xpu(version))) >= set(legal)


def test_numeric_grf_names_on_3_5_are_rejected_because_they_are_silently_ignored():
    message = problems({"grf_mode": "256"}, xpu("3.5.0"))["grf_mode"]
    assert "silently ignored" in message and "Unknown grf_mode" not in message


@pytest.mark.parametrize(("grf", "version"), [("256", "3.6.0"), ("512", "3.7.2"), ("large", "3.5.0")])
def test_large_grf_with_more_than_32_warps_is_rejected(grf, version):
    found = validate_options({"grf_mode": grf, "num_warps": 64}, xpu(version), target="intel-xe2")
    assert [(p.option, p.entry_id) for p in found] == [("grf_mode", "xpu-grf-large-max-32-warps")]
    assert "cannot be used with num_warps > 32" in found[0].message
    assert problems({"grf_mode": grf, "num_warps": 32}, xpu(version)) == {}


def test_small_grf_allows_64_warps():
    assert problems({"grf_mode": "128", "num_warps": 64}, xpu("3.6.0"), max_warps=64) == {}


@pytest.mark.parametrize("warps", [3, 6, 12, 0, -4, 2.0, "8"])
def test_num_warps_must_be_a_power_of_two(warps):
    assert "power of two" in problems({"num_warps": warps}, xpu("3.7.2"))["num_warps"]


def test_num_warps_above_the_table_and_the_device_limit():
    assert entries({"num_warps": 128}, xpu("3.7.2")) == {"xpu-num-warps-max-64"}
    assert problems({"num_warps": 64}, xpu("3.7.2"), max_warps=64) == {}
    # a device may report a tighter limit than the table: it is read at run time, without an entry
    found = validate_options({"num_warps": 64}, xpu("3.7.2"), target="intel-xe2", max_warps=32)
    assert [(p.entry_id, "device limit of 32" in p.message) for p in found] == [(None, True)]
    assert "nvidia-num-warps-max-32" in problems({"num_warps": 64}, CUDA)["num_warps"]
    assert problems({"num_warps": 128}, xpu("3.7.2"), target="intel-xe-hpg") == {}  # DG2: 128 sub-groups


def test_sub_group_size_keyword_was_renamed_in_3_6():
    assert warp_size_keyword(xpu("3.5.0")) == "threads_per_warp"
    assert warp_size_keyword(xpu("3.6.0")) == "warp_size"
    assert problems({"threads_per_warp": 16}, xpu("3.5.0")) == {}
    assert "threads_per_warp" in problems({"warp_size": 16}, xpu("3.5.0"))["warp_size"]
    assert problems({"warp_size": 16}, xpu("3.6.0")) == {}
    assert "use warp_size" in problems({"threads_per_warp": 16}, xpu("3.6.0"))["threads_per_warp"]


def test_sub_group_size_must_be_one_the_device_has():
    assert "not supported" in problems({"warp_size": 8}, xpu("3.7.2"), target="intel-xe-hpg", warp_sizes=(16, 32))[
        "warp_size"]
    assert problems({"warp_size": 8}, xpu("3.7.2"), target="intel-xe-hpg", warp_sizes=(8, 16, 32)) == {}
    assert entries({"warp_size": 8}, xpu("3.7.2")) == {"xpu-warp-size-values"}  # not on Xe2, by the table


@pytest.mark.parametrize("option", ["grf_mode", "threads_per_warp", "generate_native_code", "advanced_path"])
def test_xpu_only_options_are_rejected_on_upstream_triton(option):
    message = problems({option: "256" if option == "grf_mode" else 1}, CUDA)[option]
    assert message.startswith("[nvidia-") or message.startswith("[triton-launch-keywords-3-6]")


@pytest.mark.parametrize("option", ["maxnreg", "launch_pdl", "ptx_version"])
def test_cuda_only_options_are_rejected_on_triton_xpu(option):
    message = problems({option: 128}, xpu("3.7.2"))[option]
    assert "is not an option of this backend version" in message or "maxnreg" in message
    assert message.startswith("[xpu-")


@pytest.mark.parametrize("option", ["enable_fp_fusion", "launch_cooperative_grid", "num_stages", "num_ctas"])
def test_options_both_backends_define_are_legal_on_both(option):
    assert problems({option: 1}, xpu("3.7.2")) == {}
    assert problems({option: 1}, CUDA) == {}


def test_warp_size_on_cuda_must_be_32():
    assert problems({"warp_size": 32}, CUDA) == {}  # a CUDAOptions field from 3.5: accepted
    assert "nvidia-warp-size-32" in problems({"warp_size": 16}, CUDA)["warp_size"]


def test_a_typical_intel_gemm_config_is_legal():
    options = {"num_warps": 32, "num_stages": 2, "grf_mode": "256", "warp_size": 16}
    assert problems(options, xpu("3.7.2"), max_warps=64) == {}


def test_every_problem_is_reported_not_only_the_first():
    found = problems({"num_warps": 6, "grf_mode": "large", "maxnreg": 64}, xpu("3.6.0"))
    assert set(found) == {"num_warps", "grf_mode", "maxnreg"}


# version-specific options (issue 16): each wrong-version option is refused with its entry id -------

@pytest.mark.parametrize(("options", "version", "entry"), [
    ({"advanced_path": True}, "3.6.0", "xpu-advanced-path-removed-3-6"),
    ({"advanced_path": True}, "3.7.2", "xpu-advanced-path-removed-3-6"),
    ({"split_barriers_scope": "Workgroup"}, "3.7.0", "xpu-split-barriers-scope-removed-3-7"),
    ({"split_barriers_scope": "Subgroup"}, "3.8.0", "xpu-split-barriers-scope-removed-3-7"),
    ({"split_barriers_scope": "workgroup"}, "3.6.0", "xpu-split-barriers-scope-3-4-to-3-6"),
    ({"use_barrier": True}, "3.6.0", "xpu-use-barrier-unknown-pre-3-7"),
    ({"use_barrier": True}, "3.4.0", "xpu-use-barrier-unknown-pre-3-7"),
    ({"loop_distribute": True}, "3.7.2", "xpu-launch-keywords-3-7"),
    ({"one_matrix_per_load_for_bt": True}, "3.5.0", "xpu-launch-keywords-3-5"),
])
def test_wrong_version_options_are_rejected_with_the_entry_id(options, version, entry):
    found = validate_options(options, xpu(version), target="intel-xe-hpc")
    assert [p.entry_id for p in found] == [entry], found
    assert found[0].message.startswith(f"[{entry}]")


@pytest.mark.parametrize(("options", "version"), [
    ({"advanced_path": True}, "3.5.0"), ({"advanced_path": False}, "3.4.0"),
    ({"split_barriers_scope": "Workgroup"}, "3.6.0"), ({"split_barriers_scope": "None"}, "3.4.0"),
    ({"use_barrier": True}, "3.7.0"), ({"use_barrier": False}, "3.8.0"),
    ({"loop_distribute": True}, "3.8.0"),
])
def test_the_same_options_pass_on_their_own_versions(options, version):
    assert validate_options(options, xpu(version), target="intel-xe2") == []


def test_unknown_names_are_not_judged_as_options():
    # BLOCK_M or a typo is no backend's option: the table cannot tell it from a kernel parameter
    assert problems({"BLOCK_M": 128, "num_warp": 8}, xpu("3.7.2")) == {}
