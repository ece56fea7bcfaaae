"""The Triton a kernel is compiled by, and what a toolchain refuses: types every layer shares.

The knowledge base ranges its entries by toolchain version, devices report theirs, the option table
answers per toolchain with OptionProblems; this module sits below all of them, so none of them has
to import another to agree on what a toolchain is.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel

ToolchainName = Literal["triton", "triton-xpu"]


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


class OptionProblem(BaseModel):
    """One illegal launch option, with the reason and the knowledge-base entry that says so.

    `entry_id` is None only for limits read from the device itself (its sub-group count and sizes).
    """

    option: str
    value: Any
    message: str
    entry_id: str | None = None
