"""Helpers for the verifier corpus: where the fixtures are, and how to read a verdict.

Candidates are passed to the evaluator as source text; the parent process never imports them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from xe_forge.problem.kernel import Problem, load_problem
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.models import Finding, Verdict

FIXTURES = Path(__file__).parent / "fixtures"
HACKS = FIXTURES / "hacks"
HACK_MARKER = "# HACK"


def problem(name: str, kernel: str = "good.py") -> Problem:
    """A fixture problem: `fixtures/<name>/` with its ref_pytorch.py and spec.yaml (ci variant)."""
    folder = FIXTURES / name
    return load_problem(folder / kernel, folder / "ref_pytorch.py", folder / "spec.yaml")


def source(path: str | Path) -> str:
    """A candidate's text: `hacks/x.py`, `linear/good.py`, ... relative to the fixtures folder."""
    return (FIXTURES / path).read_text()


def hack_line(text: str) -> int:
    """The line an adversarial fixture marks with `# HACK`: where a finding must point."""
    lines = [i for i, line in enumerate(text.splitlines(), start=1) if HACK_MARKER in line]
    assert len(lines) == 1, f"expected one {HACK_MARKER} marker, found lines {lines}"
    return lines[0]


def checks(verdict: Verdict) -> set[str]:
    return {f.check for f in verdict.findings}


def finding(verdict: Verdict, check: str) -> Finding:
    """The first finding of one check, with the whole verdict in the failure message if absent."""
    found = [f for f in verdict.findings if f.check == check]
    assert found, f"no `{check}` finding in:\n{verdict.feedback()}"
    return found[0]


@contextlib.contextmanager
def unguarded(ev: Evaluator) -> Iterator[Evaluator]:
    """The evaluator with its static scan and the host subset's run-time guard switched off: proves
    another run-time defence holds on its own.

    Attacks that the static scan refuses are still run, so that the process boundary, the dispatch
    audit and the rest are shown to stop them without it.
    """
    ev.static_findings = lambda source, allow_torch: []  # type: ignore[method-assign]
    ev.runtime_subset = False  # the subset's run-time guard too: the defence under test stands alone
    try:
        yield ev
    finally:
        del ev.static_findings
        ev.runtime_subset = True


def failed(verdict: Verdict, stage: str) -> None:
    assert not verdict.passed, verdict.feedback()
    assert verdict.stage_failed == stage, verdict.feedback()
