"""Shared fixtures of the verifier corpus: one warm evaluator for the session, the linear problem.

Spawning an evaluation worker costs a few seconds (torch and triton imports), so every module that
only needs an ordinary evaluator shares this one; modules that need a short timeout or a fresh
environment build their own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from xe_forge.problem.kernel import Problem
from xe_forge.verify.evaluate import Evaluator

from .helpers import problem


@pytest.fixture(scope="session")
def evaluator() -> Iterator[Evaluator]:
    """One warm CPU worker for the whole session (the interpreter, three trials)."""
    with Evaluator("cpu", timeout=120, trials=3) as ev:
        yield ev


@pytest.fixture(scope="session")
def linear() -> Problem:
    return problem("linear")
