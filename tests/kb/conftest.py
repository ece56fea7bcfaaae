"""Fixtures for the knowledge-base tests: an isolated user layer and the bundled KB."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xe_forge.kb.loader import KnowledgeBase, bundled_dir, read_layer

# The interpreter must be on before triton is first imported in this process: triton.language's own
# @triton.jit helpers (tl.cdiv, tl.max, tl.sum) are built at import time and cannot run in interpreted
# kernels otherwise. (A root tests/conftest.py doing the same covers every test directory.)
os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture(autouse=True)
def user_kb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty user layer, so ~/.xe-forge/kb of the machine never leaks in."""
    user = tmp_path / "user-kb"
    monkeypatch.setenv("XE_FORGE_KB_PATH", str(user))
    return user


@pytest.fixture(scope="session")
def bundled() -> KnowledgeBase:
    entries, problems = read_layer(bundled_dir())
    assert not problems, problems
    return KnowledgeBase(entries, [bundled_dir()])
