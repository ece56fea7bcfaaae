"""Device detection from property dumps Intel's CI recorded (tests/fixtures_foundation/xpu/recorded),
integrated GPUs, and the worker environment the XPU device sets per toolchain."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from xe_forge.targets.base import Toolchain
from xe_forge.targets.xpu import (
    BLOCK_IO_ALL_LAYOUTS,
    XpuDevice,
    XpuProperties,
    target_for,
    worker_environment_for,
    xpu_toolchain_from,
)

RECORDED = Path(__file__).parents[1] / "fixtures_foundation" / "xpu" / "recorded"
_FIELD = re.compile(r"(\w+)=('[^']*'|\[[^\]]*\]|[^,)]+)")
_UNITS = {"MB": 1024 * 1024, "KB": 1024}


def _value(text: str) -> object:
    if text.startswith("'"):
        return text.strip("'")
    if text.startswith("["):
        return [int(v) for v in text.strip("[]").split()]
    if text.startswith("0x"):
        return int(text, 16)
    for unit, scale in _UNITS.items():
        if text.endswith(unit):
            return int(text.removesuffix(unit)) * scale
    for unit in ("MHz", "-bit"):
        text = text.removesuffix(unit)
    return int(text) if text.isdigit() else text


def recorded(name: str) -> dict:
    """The `_XpuDeviceProperties(...)` line of a recorded dump as the dict torch's object would give."""
    line = next(x for x in (RECORDED / f"{name}.txt").read_text().splitlines() if x.startswith("_XpuDeviceProperties("))
    return {key: _value(text) for key, text in _FIELD.findall(line.removeprefix("_XpuDeviceProperties("))}


def test_the_recorded_pvc_stack():
    raw = recorded("max_1550_pvc_torch_2_13")
    props = XpuProperties.from_raw(raw)
    assert raw["is_integrated_gpu"] == 0 and props.integrated is False
    assert (props.xe_cores, props.max_warps, props.warp_sizes) == (64, 64, [16, 32])
    assert props.last_level_cache_size == 192 * 1024 * 1024  # xe-hpc-llc-per-stack, not 408 MB
    assert props.total_memory == 65520 * 1024 * 1024 and props.shared_memory_per_block == 128 * 1024
    assert target_for(props) == "intel-xe-hpc"


def test_the_recorded_arc_pro_b60():
    props = XpuProperties.from_raw(recorded("arc_pro_b60_bmg"))
    assert props.integrated is False and props.architecture is None  # torch's print omits it
    assert (props.xe_cores, props.max_warps, props.warp_sizes) == (20, 64, [16, 32])
    assert props.last_level_cache_size == 18 * 1024 * 1024
    assert target_for(props) == "intel-xe2"


def _integrated(sizes: list[int], integrated: int = 1) -> XpuProperties:
    """Derived from the B60 line (no recorded iGPU dump exists): the generic iGPU name, its sizes."""
    raw = recorded("arc_pro_b60_bmg") | {"name": "Intel(R) Arc(TM) Graphics", "is_integrated_gpu": integrated,
                                        "sub_group_sizes": sizes}
    return XpuProperties.from_raw(raw)


def test_an_integrated_gpu_with_sub_group_8_is_xe_lpg_not_xe2():
    # Meteor Lake and Arrow Lake-H: min sub-group 8, no DPAS (xpu-arl-h-no-dpas); the name says nothing
    props = _integrated([8, 16, 32])
    assert props.integrated is True and target_for(props) == "intel-xe-hpg"
    assert props.max_warps == 64  # reported values stay as reported


def test_an_integrated_gpu_with_sub_group_16_is_xe2():
    assert target_for(_integrated([16, 32])) == "intel-xe2"  # Lunar Lake reports like Battlemage


def test_the_sub_group_rule_is_for_integrated_gpus_only():
    # a discrete card of unknown name with sub-group 8 is not guessed from it (the default stays)
    assert target_for(_integrated([8, 16, 32], integrated=0)) == "intel-xe2"
    assert _integrated([8, 16, 32], integrated=0).integrated is False


def test_an_old_torch_reports_no_integrated_flag():
    raw = {k: v for k, v in recorded("arc_pro_b60_bmg").items() if k != "is_integrated_gpu"}
    assert XpuProperties.from_raw(raw).integrated is None


def test_the_architecture_number_wins_over_the_integrated_sub_group_rule():
    raw = recorded("arc_pro_b60_bmg") | {"name": "Intel(R) Arc(TM) Graphics", "is_integrated_gpu": 1,
                                        "sub_group_sizes": [8, 16, 32], "architecture": 0x0000000500800000}
    assert target_for(XpuProperties.from_raw(raw)) == "intel-xe2"


# the worker environment (xpu-block-io-all-layouts-off / xpu-block-io-all-layouts) ----------------


@pytest.mark.parametrize(("version", "expected"), [
    ("3.4.0", {}),                                  # the variable does not exist yet
    ("3.5.0", {BLOCK_IO_ALL_LAYOUTS: "1"}),
    ("3.6.0", {BLOCK_IO_ALL_LAYOUTS: "1"}),
    ("3.7.0", {BLOCK_IO_ALL_LAYOUTS: "1"}),
    ("3.7.1", {}),                                  # on by default
    ("3.7.2", {}),
])
def test_block_io_for_all_layouts_is_set_where_the_toolchain_leaves_it_off(version, expected):
    assert worker_environment_for("intel-xe2", xpu_toolchain_from(version), environ={}) == expected


def test_the_users_own_setting_wins_and_is_reported():
    env = worker_environment_for("intel-xe2", xpu_toolchain_from("3.7.0"), environ={BLOCK_IO_ALL_LAYOUTS: "0"})
    assert env == {BLOCK_IO_ALL_LAYOUTS: "0"}


def test_nothing_is_set_for_upstream_triton_or_an_unlisted_target():
    assert worker_environment_for("intel-xe2", Toolchain(name="triton", version="3.6.0"), environ={}) == {}
    assert worker_environment_for("intel-xe-hpg", xpu_toolchain_from("3.6.0"), environ={}) == {}


def test_prepare_process_sets_the_worker_environment(monkeypatch):
    monkeypatch.delenv(BLOCK_IO_ALL_LAYOUTS, raising=False)
    monkeypatch.setattr(XpuDevice, "properties", lambda self: XpuProperties.from_raw(recorded("arc_pro_b60_bmg")))
    monkeypatch.setattr(XpuDevice, "toolchain", lambda self: xpu_toolchain_from("3.6.0"))
    device = XpuDevice()
    assert device.worker_environment() == {BLOCK_IO_ALL_LAYOUTS: "1"}
    device.prepare_process()
    assert os.environ[BLOCK_IO_ALL_LAYOUTS] == "1"
    monkeypatch.setenv(BLOCK_IO_ALL_LAYOUTS, "0")
    device.prepare_process()
    assert os.environ[BLOCK_IO_ALL_LAYOUTS] == "0"
