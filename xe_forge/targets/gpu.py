"""What CUDA and XPU share: event timing with an L2 flush, through torch's device module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xe_forge.targets.base import Device

FLUSH_BYTES = 256 * 1024 * 1024  # larger than any current L2 (H200 60 MB, PVC 408 MB total is per stack < 256 MB)


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

    def _flush(self) -> None:
        import torch

        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=self.torch_device())
        self._flush_buffer.zero_()

    def time_ms(self, fn: Callable[[], Any], *, flush: bool = True) -> float:
        """One call between device events, after an L2 flush; the end event follows a synchronize so
        work a candidate queued elsewhere (another stream) cannot escape the timer."""
        if flush:
            self._flush()
        start = self.module.Event(enable_timing=True)
        end = self.module.Event(enable_timing=True)
        start.record()
        fn()
        self.module.synchronize()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end))
