"""Intel GPU properties and target detection (xe_forge/targets/xpu.py), from recorded
torch.xpu.get_device_properties dumps: no Intel GPU is needed (or was used) to run these."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from xe_forge.targets.base import OptionProblem
from xe_forge.targets.xpu import XpuDevice, XpuProperties, ip_version, target_for, xpu_toolchain_from

DUMPS = Path(__file__).parents[1] / "fixtures_foundation" / "xpu"


def dump(name: str) -> dict:
    return json.loads((DUMPS / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def b70() -> XpuProperties:
    return XpuProperties.from_raw(dump("arc_pro_b70_bmg"))


@pytest.fixture(scope="module")
def pvc() -> XpuProperties:
    return XpuProperties.from_raw(dump("max_1550_pvc_old_torch"))


@pytest.fixture(scope="module")
def a770() -> XpuProperties:
    return XpuProperties.from_raw(dump("arc_a770_dg2"))


def test_arc_pro_b70_fields(b70):
    assert b70.kind == "xpu" and b70.name == "Intel(R) Arc(TM) Pro B70 Graphics"
    assert (b70.xe_cores, b70.compute_units, b70.gpu_eu_count) == (32, 256, 256)
    assert b70.max_warps == 64 and b70.warp_sizes == [16, 32] and b70.max_work_group_size == 1024
    assert b70.total_memory == 34225520640
    assert b70.shared_memory_per_block == 128 * 1024
    assert b70.last_level_cache_size == 32 * 1024 * 1024
    assert (b70.memory_clock_rate, b70.memory_bus_width) == (2375, 256)
    assert b70.has_dpas and b70.has_2d_block_io and b70.has_fp64 and b70.has_bfloat16_conversions
    assert b70.driver_version == "1.6.34666+13"


def test_old_torch_pvc_dump_gets_none_for_the_fields_it_lacks(pvc):
    raw = dump("max_1550_pvc_old_torch")
    for field in ("local_mem_size", "last_level_cache_size", "memory_clock_rate", "memory_bus_width"):
        assert field not in raw, "the fixture must stand for a torch without the newer fields"
    assert pvc.shared_memory_per_block is None and pvc.last_level_cache_size is None
    assert pvc.memory_clock_rate is None and pvc.memory_bus_width is None
    assert (pvc.xe_cores, pvc.compute_units, pvc.max_warps) == (64, 512, 64)
    assert pvc.total_memory == 64 * 1024**3 and pvc.has_fp64 and pvc.has_2d_block_io


def test_arc_a770_fields(a770):
    assert a770.warp_sizes == [8, 16, 32] and a770.max_warps == 128
    assert a770.has_dpas and not a770.has_2d_block_io and not a770.has_fp64
    assert a770.shared_memory_per_block == 64 * 1024


@pytest.mark.parametrize(("name", "target"), [("arc_pro_b70_bmg", "intel-xe2"),
                                               ("max_1550_pvc_old_torch", "intel-xe-hpc"),
                                               ("arc_a770_dg2", "intel-xe-hpg")])
def test_target_for_recorded_dumps(name, target):
    assert target_for(XpuProperties.from_raw(dump(name))) == target


@pytest.mark.parametrize(("name", "target"), [("arc_pro_b70_bmg", "intel-xe2"),
                                               ("max_1550_pvc_old_torch", "intel-xe-hpc"),
                                               ("arc_a770_dg2", "intel-xe-hpg")])
def test_numeric_architecture_alone_decides_the_target(name, target):
    # a new card on an older driver often reports a generic name; torch's architecture number still says what it is
    raw = dump(name) | {"name": "Intel(R) Graphics [0x0bd5]"}
    assert target_for(XpuProperties.from_raw(raw)) == target


@pytest.mark.parametrize(("architecture", "expected"), [
    (0x0000000500800000, (20, 2)),  # bmg_g31
    (0x0000000500400400, (20, 1)),  # bmg_g21
    (0x000000030F000700, (12, 60)),  # pvc
    (0x000000030DC00800, (12, 55)),  # acm_g10 (dg2)
    (0x0300000000000800, None),  # a CPU (spr)
    (0x9900000000000000, None),  # unknown
    ("bmg", None),
    (None, None),
])
def test_ip_version_decodes_sycl_architecture_numbers(architecture, expected):
    assert ip_version(None if architecture is None else str(architecture)) == expected


@pytest.mark.parametrize(("architecture", "name", "target"), [
    ("bmg", "", "intel-xe2"),
    ("pvc", "", "intel-xe-hpc"),
    ("dg2", "", "intel-xe-hpg"),
    (None, "Intel(R) Arc(TM) B580 Graphics", "intel-xe2"),
    (None, "Intel(R) Data Center GPU Max 1100", "intel-xe-hpc"),
    (None, "Intel(R) Arc(TM) A750 Graphics", "intel-xe-hpg"),
    (None, "Intel(R) Arc(TM) Pro B60 Graphics", "intel-xe2"),
])
def test_target_for_architecture_names_and_marketing_names(architecture, name, target):
    raw = {"name": name or "Intel(R) Graphics", "architecture": architecture}
    assert target_for(XpuProperties.from_raw(raw)) == target


def test_object_and_dict_dumps_parse_alike(b70):
    # torch gives an object with attributes; recorded dumps are dicts
    assert XpuProperties.from_raw(SimpleNamespace(**dump("arc_pro_b70_bmg"))) == b70


def test_an_empty_dump_leaves_sub_group_facts_unknown():
    props = XpuProperties.from_raw({})
    assert props.max_warps is None and props.warp_sizes is None and props.architecture is None
    assert target_for(props) == "intel-xe2"  # what to optimise for; not a claim about the device


@pytest.mark.parametrize(("name", "sizes", "max_warps"), [
    ("arc_a770_dg2", [8, 16, 32], 128),           # DG2: never the Xe2 values
    ("arc_pro_b70_bmg", [16, 32], 64),
    ("max_1550_pvc_old_torch", [16, 32], 64),
])
def test_missing_sub_group_fields_are_derived_from_the_architecture(name, sizes, max_warps):
    raw = {k: v for k, v in dump(name).items() if k not in ("sub_group_sizes", "max_num_sub_groups")}
    props = XpuProperties.from_raw(raw)
    assert (props.warp_sizes, props.max_warps) == (sizes, max_warps)


def test_an_unrecognised_architecture_gets_no_invented_sub_group_facts():
    props = XpuProperties.from_raw({"name": "Intel(R) Graphics [0x1234]", "architecture": 0x9900000000000000})
    assert props.warp_sizes is None and props.max_warps is None


def test_reported_sub_group_fields_win_over_the_architecture():
    raw = dump("arc_a770_dg2") | {"sub_group_sizes": [16, 32], "max_num_sub_groups": 64}
    props = XpuProperties.from_raw(raw)
    assert (props.warp_sizes, props.max_warps) == ([16, 32], 64)


def test_properties_serialize_for_doctor(b70):
    assert json.loads(b70.model_dump_json())["xe_cores"] == 32


def test_xpu_device_validates_against_its_own_properties_and_toolchain(monkeypatch, a770):
    monkeypatch.setattr(XpuDevice, "properties", lambda self: a770)
    monkeypatch.setattr(XpuDevice, "toolchain", lambda self: xpu_toolchain_from("3.5.0"))
    device = XpuDevice()
    assert device.detected_target() == "intel-xe-hpg"
    assert device.validate_launch_options({"threads_per_warp": 8, "num_warps": 128, "grf_mode": "small"}) == []
    found = device.validate_launch_options({"grf_mode": "256", "num_warps": 256})
    assert {p.option for p in found} == {"grf_mode", "num_warps"}
    assert all(isinstance(p, OptionProblem) and p.entry_id for p in found)


def test_sub_group_size_8_is_legal_on_dg2_only(monkeypatch, a770, b70):
    monkeypatch.setattr(XpuDevice, "toolchain", lambda self: xpu_toolchain_from("3.7.2"))
    for props, legal in ((a770, True), (b70, False)):
        monkeypatch.setattr(XpuDevice, "properties", lambda self, p=props: p)
        assert (XpuDevice().validate_launch_options({"warp_size": 8}) == []) is legal


def test_a_device_without_sub_group_facts_is_checked_by_the_table_alone(monkeypatch):
    props = XpuProperties.from_raw({"name": "Intel(R) Graphics [0x1234]"})
    monkeypatch.setattr(XpuDevice, "properties", lambda self: props)
    monkeypatch.setattr(XpuDevice, "toolchain", lambda self: xpu_toolchain_from("3.7.2"))
    assert XpuDevice().validate_launch_options({"warp_size": 16, "num_warps": 64}) == []
    assert [p.entry_id for p in XpuDevice().validate_launch_options({"advanced_path": True})] == [
        "xpu-advanced-path-removed-3-6"]
