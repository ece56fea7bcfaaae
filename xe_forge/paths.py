"""Where the bundled data lives.

In a wheel, stages/, prompts/, knowledge_base/ and examples/ are copied under xe_forge/_data; in a
source checkout (editable install, tests) they sit at the repository root. Both must work, so every
lookup goes through here.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the directory of bundled data `name` (stages, prompts, knowledge_base, examples)."""
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"bundled data directory '{name}' is missing from the installation")
