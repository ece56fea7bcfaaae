"""Device selection (xe_forge/targets/__init__.py): `auto` tries xpu, then cuda, then cpu; an absent
device is an environment error (exit 3), an unknown name or target a bad input (exit 2)."""

from __future__ import annotations

import os

import pytest

from xe_forge.errors import EnvError, InputError
from xe_forge.targets import TARGETS, device_kinds, get_device, resolve_target
from xe_forge.targets.cpu import CpuDevice
from xe_forge.targets.cuda import CudaDevice, target_for_capability
from xe_forge.targets.xpu import XpuDevice


def always(cls, monkeypatch):
    monkeypatch.setattr(cls, "available", classmethod(lambda c: True))


def never(cls, monkeypatch):
    monkeypatch.setattr(cls, "available", classmethod(lambda c: False))


def test_every_kind_is_registered():
    assert set(device_kinds()) == {"cpu", "cuda", "xpu"}


def test_auto_is_the_cpu_without_a_gpu(monkeypatch):
    never(CudaDevice, monkeypatch)
    never(XpuDevice, monkeypatch)
    device = get_device("auto")
    assert isinstance(device, CpuDevice) and device.target == "intel-xe2"


def test_auto_prefers_xpu_then_cuda(monkeypatch):
    always(CudaDevice, monkeypatch)
    assert isinstance(get_device("auto"), CudaDevice)
    always(XpuDevice, monkeypatch)
    assert isinstance(get_device("auto"), XpuDevice)


@pytest.mark.parametrize("name", ["cuda", "xpu"])
def test_an_absent_gpu_is_an_environment_error(name, monkeypatch):
    never({"cuda": CudaDevice, "xpu": XpuDevice}[name], monkeypatch)
    with pytest.raises(EnvError, match=f"device '{name}' is not available") as info:
        get_device(name)
    assert info.value.exit_code == 3
    assert "doctor" in str(info.value)


def test_an_unknown_device_is_an_input_error():
    with pytest.raises(InputError, match="unknown device 'tpu'") as info:
        get_device("tpu")
    assert info.value.exit_code == 2
    assert "auto, xpu, cuda, cpu" in str(info.value)


def test_cpu_takes_the_target_it_prepares_for():
    assert get_device("cpu", target="intel-xe-hpc").target == "intel-xe-hpc"
    with pytest.raises(InputError, match="unknown target 'intel-xe9'"):
        get_device("cpu", target="intel-xe9")


def test_resolve_target_defaults_and_choices():
    assert resolve_target(None, None) == "intel-xe2"
    assert resolve_target(CpuDevice(), None) == "intel-xe2"
    for target in TARGETS:
        assert resolve_target(None, target) == target
    with pytest.raises(InputError) as info:
        resolve_target(CpuDevice(), "xe2")
    assert info.value.exit_code == 2 and "intel-xe-hpc" in str(info.value)


def test_resolve_target_uses_what_a_gpu_detects(monkeypatch):
    monkeypatch.setattr(CudaDevice, "detected_target", lambda self: "nvidia-sm90")
    assert resolve_target(CudaDevice(), None) == "nvidia-sm90"
    assert resolve_target(CudaDevice(), "intel-xe2") == "intel-xe2", "the user's choice wins"


def test_cuda_target_from_capability():
    assert target_for_capability((9, 0)) == "nvidia-sm90"
    assert target_for_capability((8, 0)) == "nvidia-any"


def test_a_cuda_worker_tears_cupti_down_after_profiling_unless_told_otherwise(monkeypatch):
    """The candidate's process profiles its checked calls (GPU kernel list) before it is timed; Kineto
    keeps CUPTI initialised afterwards unless TEARDOWN_CUPTI=1, and every later launch pays for it."""
    monkeypatch.delenv("TEARDOWN_CUPTI", raising=False)
    CudaDevice().prepare_process()
    assert os.environ["TEARDOWN_CUPTI"] == "1"
    monkeypatch.setenv("TEARDOWN_CUPTI", "0")  # a user's own setting stands
    CudaDevice().prepare_process()
    assert os.environ["TEARDOWN_CUPTI"] == "0"
