"""Intel GPUs through native torch.xpu and triton-xpu (Xe2 Battlemage, Xe-HPC Ponte Vecchio, Xe-HPG).

Not run on Intel hardware in this project yet: the property parsing, target detection and option
validation are tested with recorded property dumps and version strings (tests/targets/).

When torch does not report the sub-group sizes or the sub-group limit, they are taken from the
knowledge base's facts for the recognised architecture (Xe2 and Xe-HPC: 16/32 and 64; Xe-HPG: 8/16/32
and 128), and left unknown (None) when the architecture is not recognised: never guessed.

Integrated GPUs all carry names like "Intel(R) Arc(TM) Graphics" (Xe-LPG and Xe2 alike), so for them
torch's `is_integrated_gpu` and `architecture` decide, and where neither a known architecture nor a
known name does, the smallest sub-group size does (8: Xe-LPG, no DPAS; 16: Xe2), by the knowledge
base's sub-group facts (xpu-integrated-gpus).

The worker environment: triton-xpu 3.5 to 3.7.0 give loads that do not feed a dot block I/O only with
TRITON_INTEL_ENABLE_BLOCK_IO_ALL_LAYOUTS=1 (xpu-block-io-all-layouts-off). A kernel file cannot set
it, so the device sets it in every worker process it prepares (judge and candidate alike, so the
comparison stays fair), unless the user's environment already decides; the run report lists it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from xe_forge.kb.loader import bundled_kb
from xe_forge.targets.base import DeviceProperties, OptionProblem, Toolchain, register
from xe_forge.targets.gpu import TorchGpuDevice
from xe_forge.targets.options import validate_options

# torch.xpu.get_device_properties fields; newer torch adds the last four. A None default
# means "not reported": sub-group facts are then derived from the architecture, or stay unknown.
XPU_FIELDS: dict[str, Any] = {
    "name": "unknown", "platform_name": "", "vendor": "", "driver_version": "", "max_compute_units": 0,
    "gpu_eu_count": 0, "gpu_subslice_count": 0, "max_work_group_size": 1024, "max_num_sub_groups": None,
    "sub_group_sizes": None, "has_fp16": True, "has_fp64": False, "has_bfloat16_conversions": False,
    "has_subgroup_matrix_multiply_accumulate": False, "has_subgroup_2d_block_io": False,
    "total_memory": 0, "architecture": None, "local_mem_size": None, "last_level_cache_size": None,
    "memory_clock_rate": None, "memory_bus_width": None, "is_integrated_gpu": None,
}
BLOCK_IO_ALL_LAYOUTS = "TRITON_INTEL_ENABLE_BLOCK_IO_ALL_LAYOUTS"
BLOCK_IO_DEFAULT_FACT = "triton_xpu.block_io_all_layouts_default"


# Knowledge-base fact prefix of each Intel target ('xe_hpg.sub_group_sizes').
FACT_PREFIX = {"intel-xe2": "xe2", "intel-xe-hpc": "xe_hpc", "intel-xe-hpg": "xe_hpg"}


def architecture_fact(target: str | None, name: str) -> Any:
    """A fact of an Intel architecture from the bundled knowledge base; None when the target is not
    known or no entry states it."""
    if target not in FACT_PREFIX:
        return None
    return bundled_kb().fact(f"{FACT_PREFIX[target]}.{name}", target)


def integrated_target(sub_group_sizes: Any) -> str | None:
    """The target of an integrated GPU that neither its architecture nor its name identifies, from its
    smallest sub-group size: Xe-LPG parts report 8 (no DPAS), Xe2 parts 16 (xpu-integrated-gpus)."""
    if not sub_group_sizes:
        return None
    smallest = min(int(s) for s in sub_group_sizes)
    if smallest == architecture_fact("intel-xe-hpg", "min_sub_group_size"):
        return "intel-xe-hpg"
    xe2 = architecture_fact("intel-xe2", "sub_group_sizes")
    return "intel-xe2" if xe2 and smallest == min(xe2) else None


def worker_environment_for(target: str, toolchain: Toolchain, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables an XPU worker runs with for this target and toolchain, as the knowledge base
    decides them (the user's own value wins): TRITON_INTEL_ENABLE_BLOCK_IO_ALL_LAYOUTS=1 where the
    toolchain leaves block I/O for non-dot loads off. Empty when nothing needs setting."""
    if bundled_kb().fact(BLOCK_IO_DEFAULT_FACT, target, toolchain) is not False:
        return {}
    environ = os.environ if environ is None else environ
    return {BLOCK_IO_ALL_LAYOUTS: environ.get(BLOCK_IO_ALL_LAYOUTS, "1")}


class XpuProperties(DeviceProperties):
    warp_sizes: list[int] | None = None  # None: neither reported nor known for the architecture
    platform_name: str = ""
    vendor: str = ""
    driver_version: str = ""
    gpu_eu_count: int = 0
    xe_cores: int = 0
    max_work_group_size: int = 1024
    has_fp64: bool = False
    has_bfloat16_conversions: bool = False
    has_dpas: bool = False
    has_2d_block_io: bool = False
    architecture: str | None = None
    integrated: bool | None = None  # None: torch too old to report is_integrated_gpu
    last_level_cache_size: int | None = None
    memory_clock_rate: int | None = None
    memory_bus_width: int | None = None

    @classmethod
    def from_raw(cls, raw: Any) -> XpuProperties:
        """Read a torch.xpu property object (or a recorded dict), with defaults for fields older torch lacks."""
        get = raw.get if isinstance(raw, dict) else (lambda k, d: getattr(raw, k, d))
        f = {k: get(k, default) for k, default in XPU_FIELDS.items()}
        arch = f["architecture"]
        integrated = None if f["is_integrated_gpu"] is None else bool(f["is_integrated_gpu"])
        known = known_target(None if arch is None else str(arch), str(f["name"]))
        if known is None and integrated:
            known = integrated_target(f["sub_group_sizes"])
        sizes = f["sub_group_sizes"] or architecture_fact(known, "sub_group_sizes")
        max_warps = f["max_num_sub_groups"] or architecture_fact(known, "max_sub_groups_per_work_group")
        return cls(
            kind="xpu", name=str(f["name"]), platform_name=str(f["platform_name"]), vendor=str(f["vendor"]),
            driver_version=str(f["driver_version"]), compute_units=int(f["max_compute_units"] or 0),
            gpu_eu_count=int(f["gpu_eu_count"] or 0), xe_cores=int(f["gpu_subslice_count"] or 0),
            total_memory=int(f["total_memory"] or 0), max_warps=None if max_warps is None else int(max_warps),
            warp_sizes=None if sizes is None else [int(s) for s in sizes],
            max_work_group_size=int(f["max_work_group_size"] or 1024),
            shared_memory_per_block=f["local_mem_size"], has_fp64=bool(f["has_fp64"]),
            has_bfloat16_conversions=bool(f["has_bfloat16_conversions"]),
            has_dpas=bool(f["has_subgroup_matrix_multiply_accumulate"]),
            has_2d_block_io=bool(f["has_subgroup_2d_block_io"]),
            architecture=None if arch is None else str(arch), integrated=integrated,
            last_level_cache_size=f["last_level_cache_size"],
            memory_clock_rate=f["memory_clock_rate"], memory_bus_width=f["memory_bus_width"],
        )


def ip_version(architecture: str | None) -> tuple[int, int] | None:
    """(major, minor) graphics IP of torch's numeric `architecture`, or None when it is not one.

    torch reports SYCL's architecture enum value; for Intel GPUs it is 0x00_0000_<GMDID>_00, whose
    GMDID keeps the IP major in its top 10 bits and the minor in the next 8 (PVC is 12.60, DG2
    12.55-12.57, BMG 20.1/20.2). Other vendors and CPUs set the top byte.
    """
    if architecture is None or not str(architecture).isdigit():
        return None
    value = int(str(architecture))
    if value >> 56:
        return None
    gmdid = (value >> 8) & 0xFFFFFFFF
    return gmdid >> 22, (gmdid >> 14) & 0xFF


def known_target(architecture: str | None, name: str) -> str | None:
    """Knowledge-base target of an Intel GPU from its architecture (number or name) or its marketing
    name; None when neither is recognised."""
    version = ip_version(architecture)
    if version is not None and version[0] >= 20:
        return "intel-xe2"
    if version is not None and version[0] == 12 and version[1] in (60, 61):
        return "intel-xe-hpc"
    if version is not None and version[0] == 12 and 55 <= version[1] <= 74:
        return "intel-xe-hpg"
    text = f"{architecture or ''} {name}".lower()
    if any(k in text for k in ("pvc", "max 1550", "max 1100", "data center gpu max", "ponte")):
        return "intel-xe-hpc"
    if any(k in text for k in ("bmg", "lnl", "ptl", "battlemage", " b5", " b6", " b7", "arc pro b", "arc b", "xe2")):
        return "intel-xe2"
    if any(k in text for k in ("dg2", "alchemist", "a770", "a750", "a380", "arc a", "arc pro a", "mtl", "arl")):
        return "intel-xe-hpg"
    return None


def target_for(props: XpuProperties) -> str:
    """The knowledge-base target to optimise for: the recognised one (an integrated GPU also by its
    smallest sub-group size), else Xe2 (the first target)."""
    known = known_target(props.architecture, props.name)
    if known is None and props.integrated:
        known = integrated_target(props.warp_sizes)
    return known or "intel-xe2"


def xpu_toolchain_from(version: str) -> Toolchain:
    return Toolchain(name="triton-xpu", version=version)


@register
class XpuDevice(TorchGpuDevice):
    kind = "xpu"
    backend = "xpu"
    default_target = "intel-xe2"

    @classmethod
    def available(cls) -> bool:
        try:
            import torch
        except ImportError:
            return False
        xpu = getattr(torch, "xpu", None)
        return bool(xpu is not None and xpu.is_available())

    def properties(self) -> XpuProperties:
        import torch

        return XpuProperties.from_raw(torch.xpu.get_device_properties(self.index))

    def detected_target(self) -> str:
        return target_for(self.properties())

    def toolchain(self) -> Toolchain:
        import triton

        return xpu_toolchain_from(triton.__version__)

    def worker_environment(self) -> dict[str, str]:
        return worker_environment_for(self.detected_target(), self.toolchain())

    def prepare_process(self) -> None:
        for name, value in self.worker_environment().items():
            os.environ.setdefault(name, value)  # before the first compile: 3.5 to 3.7.0 read it once

    def validate_launch_options(self, options: dict[str, Any]) -> list[OptionProblem]:
        props = self.properties()
        sizes = None if props.warp_sizes is None else tuple(props.warp_sizes)
        return validate_options(options, self.toolchain(), target=target_for(props), max_warps=props.max_warps,
                                warp_sizes=sizes)
