"""Device kinds (xpu, cuda, cpu): detection, properties, timing, legal launch options."""

from __future__ import annotations

from xe_forge.errors import EnvError, InputError
from xe_forge.targets import cpu, cuda, xpu  # noqa: F401  (each device module registers its kind)
from xe_forge.targets.base import AUTO_ORDER, TARGETS, Device, Toolchain, registered

__all__ = ["Device", "Toolchain", "TARGETS", "get_device", "resolve_target", "device_kinds"]


def device_kinds() -> list[str]:
    return list(registered())


def get_device(name: str = "auto", target: str | None = None) -> Device:
    """`auto` picks xpu, then cuda, then cpu; a named device that is absent is an environment error."""
    kinds = registered()
    if name == "auto":
        for kind in AUTO_ORDER:
            if kinds[kind].available():
                name = kind
                break
    if name not in kinds:
        raise InputError(f"unknown device '{name}'", hint=f"choose one of: auto, {', '.join(AUTO_ORDER)}")
    cls = kinds[name]
    if not cls.available():
        raise EnvError(f"device '{name}' is not available on this machine",
                       hint="`xe-forge doctor` lists what was found; --device cpu runs the interpreter")
    if name == "cpu":
        return cls(target=resolve_target(None, target))  # type: ignore[call-arg]
    return cls()


def resolve_target(device: Device | None, target: str | None) -> str:
    """The knowledge-base target: the user's choice, else detected from the device (CPU: intel-xe2)."""
    if target is not None:
        if target not in TARGETS:
            raise InputError(f"unknown target '{target}'", hint=f"targets: {', '.join(TARGETS)}")
        return target
    if device is None:
        return "intel-xe2"
    detect = getattr(device, "detected_target", None)
    return detect() if detect else device.default_target
