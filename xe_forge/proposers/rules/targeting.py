"""Which family a knowledge-base target belongs to, and the toolchain shape the rules accept.

Transforms receive the run's toolchain as any object with a name and a version (the pipeline's
Toolchain, a test's stand-in); `as_toolchain` turns it into the one Toolchain model the option
table and the knowledge base take.
"""

from __future__ import annotations

from typing import Literal, Protocol

from xe_forge.toolchain import Toolchain

Family = Literal["intel", "nvidia", "any"]


class ToolchainLike(Protocol):
    name: str
    version: str


def family(target: str) -> Family:
    if target.startswith("intel"):
        return "intel"
    if target.startswith("nvidia"):
        return "nvidia"
    return "any"


def as_toolchain(toolchain: ToolchainLike) -> Toolchain:
    return toolchain if isinstance(toolchain, Toolchain) else Toolchain(name=toolchain.name, version=str(toolchain.version))
