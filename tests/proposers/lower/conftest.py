"""Shared fixtures for the lower proposer's tests (recorded lowerings live in recorded.py)."""

from __future__ import annotations

import os

import pytest

# the interpreter must be on before triton is first imported (its own jit helpers are built then)
os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture(scope="module")
def cpu_evaluator():
    from xe_forge.verify.evaluate import Evaluator

    with Evaluator("cpu", timeout=900) as ev:
        yield ev
