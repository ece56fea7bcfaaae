"""Helpers for the knowledge-base tests: toolchains and entry-file builders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from xe_forge.targets.base import Toolchain

XPU_372 = Toolchain(name="triton-xpu", version="3.7.2")
XPU_35 = Toolchain(name="triton-xpu", version="3.5.0")
XPU_36 = Toolchain(name="triton-xpu", version="3.6.0")
TRITON_39 = Toolchain(name="triton", version="3.9.0")


def make_entry(entry_id: str = "test-entry", **fields: Any) -> dict[str, Any]:
    """A minimal valid constraint entry; keyword arguments override or add fields."""
    entry: dict[str, Any] = {
        "id": entry_id, "kind": "constraint", "title": f"Title of {entry_id}", "stages": ["device_tuning"],
        "targets": ["intel-xe2"], "source": "tests/kb/helpers.py", "verified_on": "source only", "confidence": "high",
        "summary": "A test entry.",
        "constraint": {"rule": "a rule"},
    }
    entry.update(fields)
    return entry


def write_entries(path: Path, *entries: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"entries": list(entries)}, sort_keys=False), encoding="utf-8")
    return path
