"""What every device kind provides, and the registry the rest of the code asks for devices.

Devices register themselves (`@register`) instead of being switched on by `if device == ...` branches
scattered around: the evaluator, the CLI and the pipeline only ever talk to a `Device`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, Field

ToolchainName = Literal["triton", "triton-xpu"]
TARGETS = ("intel-xe2", "intel-xe-hpc", "intel-xe-hpg", "nvidia-sm90", "nvidia-any", "any")


class Toolchain(BaseModel):
    """The Triton a kernel is compiled by: upstream `triton` or Intel's `triton-xpu` (same module name)."""

    name: ToolchainName
    version: str

    @property
    def parsed(self) -> Version:
        return parse_version(self.version)

    def satisfies(self, spec: str | None) -> bool:
        """True if `spec` (e.g. 'triton-xpu>=3.6,<3.7.2') admits this toolchain; None admits all."""
        if not spec:
            return True
        name, specifier = split_toolchain_spec(spec)
        if name != self.name:
            return False
        return SpecifierSet(specifier).contains(self.parsed, prereleases=True)

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


def parse_version(text: str) -> Version:
    """Parse a version such as '3.7.2', '3.6.0+git1234' or '3.5.0.dev20250101'; local tags are ignored."""
    match = re.match(r"\d+(\.\d+)*", text.strip())
    if not match:
        raise InvalidVersion(text)
    return Version(match.group(0))


def split_toolchain_spec(spec: str) -> tuple[str, str]:
    """'triton-xpu>=3.6,<3.7.2' -> ('triton-xpu', '>=3.6,<3.7.2'); raises ValueError when malformed."""
    match = re.fullmatch(r"\s*(triton-xpu|triton)\s*([<>=!~].*)?", spec)
    if not match:
        raise ValueError(f"toolchain range '{spec}' must start with 'triton' or 'triton-xpu'")
    name, specifier = match.group(1), (match.group(2) or "").strip()
    try:
        SpecifierSet(specifier)
    except InvalidSpecifier:
        raise ValueError(f"toolchain range '{spec}' has an invalid version specifier '{specifier}'") from None
    return name, specifier


class DeviceProperties(BaseModel):
    """Common device facts; subclasses add the vendor's own fields."""

    kind: str
    name: str = "unknown"
    compute_units: int = 0
    total_memory: int = 0
    max_warps: int | None = None
    warp_sizes: list[int] = Field(default_factory=lambda: [32])
    shared_memory_per_block: int | None = None


class OptionProblem(BaseModel):
    """One illegal launch option, with the reason and the knowledge-base entry that says so.

    `entry_id` is None only for limits read from the device itself (its sub-group count and sizes).
    """

    option: str
    value: Any
    message: str
    entry_id: str | None = None


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

    def synchronize(self) -> None:  # noqa: B027 - optional hook
        """Wait for queued device work."""

    def time_ms(self, fn: Callable[[], Any], *, flush: bool = True) -> float:
        """Time one call of fn in milliseconds with device events, after an L2 flush."""
        raise NotImplementedError(f"{self.kind} does not measure speed")


_REGISTRY: dict[str, type[Device]] = {}
AUTO_ORDER = ("xpu", "cuda", "cpu")


def register(cls: type[Device]) -> type[Device]:
    _REGISTRY[cls.kind] = cls
    return cls


def registered() -> dict[str, type[Device]]:
    # Importing the modules registers them; done lazily to keep `import xe_forge` light.
    from xe_forge.targets import cpu, cuda, xpu  # noqa: F401

    return dict(_REGISTRY)
