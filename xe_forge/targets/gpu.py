"""What CUDA and XPU share: event timing with an L2 flush, through torch's device module."""

from __future__ import annotations

from typing import Any

from xe_forge.targets.base import Device

FLUSH_BYTES = 256 * 1024 * 1024  # larger than any current last-level cache (H200 60 MB, PVC 192 MB per stack)


class TorchGpuDevice(Device):
    """A GPU reached through `torch.<backend>` (torch.cuda or torch.xpu)."""

    backend: str
    measures_speed = True

    def __init__(self, index: int = 0) -> None:
        self.index = index
        self._flush_buffer = None

    @property
    def module(self) -> Any:
        import torch

        return getattr(torch, self.backend)

    def torch_device(self) -> str:
        return f"{self.backend}:{self.index}"

    def synchronize(self) -> None:
        self.module.synchronize()

    def open_context(self) -> None:
        import torch

        torch.empty(1, device=self.torch_device())

    def lock(self) -> Any:
        from xe_forge.targets.device_lock import device_lock

        return device_lock(f"{self.backend}-{self.index}")

    def flush(self) -> None:
        import torch

        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=self.torch_device())
        self._flush_buffer.zero_()

    def new_mark(self) -> Any:
        return self.module.Event(enable_timing=True)

    def mark(self, made: Any = None) -> Any:
        event = made if made is not None else self.module.Event(enable_timing=True)
        event.record()
        return event

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(start.elapsed_time(end))
