"""Shared fixtures for the lower proposer's tests (recorded lowerings live in recorded.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def cpu_evaluator():
    from xe_forge.verify.evaluate import Evaluator

    with Evaluator("cpu", timeout=900) as ev:
        yield ev
