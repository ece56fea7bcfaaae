"""NVIDIA GPUs through torch.cuda and upstream Triton (Hopper is the second target)."""

from __future__ import annotations

import os
from typing import Any

from xe_forge.targets.base import DeviceProperties, OptionProblem, Toolchain, register
from xe_forge.targets.cpu import installed_triton_version
from xe_forge.targets.gpu import TorchGpuDevice
from xe_forge.targets.options import validate_options


class CudaProperties(DeviceProperties):
    capability: tuple[int, int] = (0, 0)
    l2_cache_size: int = 0


def target_for_capability(capability: tuple[int, int]) -> str:
    return "nvidia-sm90" if capability[0] == 9 else "nvidia-any"


@register
class CudaDevice(TorchGpuDevice):
    kind = "cuda"
    backend = "cuda"
    default_target = "nvidia-sm90"

    @classmethod
    def available(cls) -> bool:
        try:
            import torch
        except ImportError:
            return False
        return bool(torch.cuda.is_available())

    def prepare_process(self) -> None:
        # Kineto leaves CUPTI initialised after a profiler session unless told to tear it down, and every
        # later launch in the process pays for it (pytorch/pytorch#144455). The candidate's process
        # profiles its checked calls for the GPU kernel list, then is timed; on an H200 the same file's
        # host code ran about twice as slow there as in the baseline's process, which never profiles
        # (this is the likely cause; that it is the whole cause has not yet been shown on a GPU).
        os.environ.setdefault("TEARDOWN_CUPTI", "1")

    def properties(self) -> CudaProperties:
        import torch

        p = torch.cuda.get_device_properties(self.index)
        return CudaProperties(
            kind="cuda", name=p.name, compute_units=p.multi_processor_count, total_memory=p.total_memory,
            max_warps=32, warp_sizes=[32], capability=(p.major, p.minor),
            l2_cache_size=getattr(p, "L2_cache_size", 0),
            shared_memory_per_block=getattr(p, "shared_memory_per_block_optin", None),
        )

    def detected_target(self) -> str:
        return target_for_capability(self.properties().capability)

    def toolchain(self) -> Toolchain:
        return Toolchain(name="triton", version=installed_triton_version() or "0")

    def validate_launch_options(self, options: dict[str, Any]) -> list[OptionProblem]:
        return validate_options(options, self.toolchain(), target=self.detected_target())
