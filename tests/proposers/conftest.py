"""Fixtures shared by the proposer tests: one warm CPU evaluator (the verifier every candidate meets)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def cpu_evaluator():  # noqa: ANN201
    from xe_forge.verify.evaluate import Evaluator

    with Evaluator("cpu", target="nvidia-sm90", timeout=900) as evaluator:
        yield evaluator


@pytest.fixture
def trace_in_this_process(monkeypatch):  # noqa: ANN001, ANN201
    """Trace references in the test process: a subprocess per reference costs seconds of torch
    import on the shared CPU (test_fusion_trace.py covers the subprocess itself)."""
    from xe_forge.proposers.fusion import trace

    monkeypatch.setattr(trace, "_trace_in_subprocess", lambda source, timeout: trace.trace_in_process(source))
