"""What every device kind provides, and the registry the rest of the code asks for devices.

Devices register themselves (`@register`) instead of being switched on by `if device == ...` branches
scattered around: the evaluator, the CLI and the pipeline only ever talk to a `Device`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from xe_forge.names import TARGETS
from xe_forge.toolchain import OptionProblem, Toolchain, ToolchainName, parse_version, split_toolchain_spec

# Re-exported: devices and their callers have always found these here (defined in the shared leaves).
__all__ = ["AUTO_ORDER", "TARGETS", "Device", "DeviceProperties", "OptionProblem", "Toolchain", "ToolchainName",
           "parse_version", "register", "registered", "split_toolchain_spec"]

class DeviceProperties(BaseModel):
    """Common device facts; subclasses add the vendor's own fields."""

    kind: str
    name: str = "unknown"
    compute_units: int = 0
    total_memory: int = 0
    max_warps: int | None = None
    warp_sizes: list[int] = Field(default_factory=lambda: [32])
    shared_memory_per_block: int | None = None


class Device(ABC):
    """A device kind: detection, properties, timing and legal launch options for its toolchain."""

    kind: ClassVar[str]
    default_target: ClassVar[str]
    measures_speed: ClassVar[bool]

    @classmethod
    @abstractmethod
    def available(cls) -> bool:
        """Whether this kind of device can be used in this process."""

    @abstractmethod
    def properties(self) -> DeviceProperties: ...

    @abstractmethod
    def toolchain(self) -> Toolchain: ...

    @abstractmethod
    def torch_device(self) -> str: ...

    @abstractmethod
    def validate_launch_options(self, options: dict[str, Any]) -> list[OptionProblem]: ...

    def prepare_process(self) -> None:  # noqa: B027 - optional hook
        """Set up a worker process before any kernel module is imported (env vars, patches)."""

    def open_context(self) -> None:  # noqa: B027 - optional hook
        """Create the device's context now, at a worker's start-up (workers start side by side), rather
        than inside its first request: on an H200 that first allocation cost a check about 4 s."""

    def worker_environment(self) -> dict[str, str]:
        """Environment variables this device's workers compile and run kernels under, beyond the
        caller's own: the run report records them, since the output kernel needs them too."""
        return {}

    def synchronize(self) -> None:  # noqa: B027 - optional hook
        """Wait for queued device work."""

    # Timing primitives (verify/timing.py builds its loops from these, the same for every side).
    # A mark is queued on the device like a kernel; elapsed_ms reads two marks once the device has
    # passed both (after synchronize). clock_tolerance is how far the device timer and the parent's
    # wall clock may disagree on an honest call (verify/clock.py).
    clock_tolerance: ClassVar[float] = 0.15

    def lock(self) -> Any:
        """The cross-process lock of this device (targets/device_lock.py): timing exclusive, kernels shared."""
        from xe_forge.targets.device_lock import NoLock

        return NoLock()

    def flush(self) -> None:  # noqa: B027 - optional hook
        """Evict the caches a timed call could find warm (queued, not waited for)."""

    def new_mark(self) -> Any:
        """A mark made ahead of a timed loop, so the loop only records it (None: made when recorded)."""
        return None

    def mark(self, made: Any = None) -> Any:
        """A timestamp queued on the device after the work queued so far (records `made` if given)."""
        raise NotImplementedError(f"{self.kind} does not measure speed")

    def elapsed_ms(self, start: Any, end: Any) -> float:
        """Milliseconds between two marks; only after synchronize()."""
        raise NotImplementedError(f"{self.kind} does not measure speed")

    def time_ms(self, fn: Callable[[], Any], *, flush: bool = True) -> float:
        """One call of fn between two marks after a flush, as triton.testing.do_bench times one call:
        the flush queued ahead hides the host's launch time behind device work."""
        if flush:
            self.flush()
        start = self.mark()
        fn()
        end = self.mark()
        self.synchronize()
        return self.elapsed_ms(start, end)


_REGISTRY: dict[str, type[Device]] = {}
AUTO_ORDER = ("xpu", "cuda", "cpu")


def register(cls: type[Device]) -> type[Device]:
    _REGISTRY[cls.kind] = cls
    return cls


def registered() -> dict[str, type[Device]]:
    """Every device kind, by name. The package (targets/__init__.py) imports each device module, and
    each registers itself with `@register`: nothing here needs to know them."""
    return dict(_REGISTRY)
