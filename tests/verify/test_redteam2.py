"""Red team 2's corpus (written against verifier v3 without red team 1's corpus, from
docs/VERIFIER.md, docs/SPEC.md, the README, examples/ and xe_forge/ only): every attack rejected, every
honest kernel accepted, checked as `xe-forge check --device cpu` checks them.

The files stay where the red team left them (redteam/red2/, with RESULTS.md: the attacks, their
classes and the root causes); redteam/red2/run_all.sh runs them through the CLI. Attacks on a class
the verifier does not close yet are listed in OPEN with the reason (docs/VERIFIER.md, residual risks).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, declared_allowance

CORPUS = Path(__file__).resolve().parents[2] / "redteam" / "red2"
# root causes as numbered in redteam/red2/RESULTS.md
OPEN: dict[str, str] = {}


def _files() -> list[str]:
    return sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*.py")
                  if p.name.startswith(("atk_", "honest_")))


def _param(path: str):
    marks = [pytest.mark.xfail(reason=OPEN[path], strict=True)] if path in OPEN else []
    return pytest.param(path, id=path, marks=marks)


@pytest.fixture(scope="module")
def cli_like() -> Iterator[Evaluator]:
    """The evaluator `xe-forge check --device cpu` builds (three trials)."""
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


def test_the_corpus_is_all_here():
    files = _files()
    assert sum(f.split("/")[1].startswith("atk_") for f in files) == 46
    assert sum(f.split("/")[1].startswith("honest_") for f in files) == 16
    assert set(OPEN) <= set(files)


@pytest.mark.slow
@pytest.mark.parametrize("path", [_param(p) for p in _files()])
def test_redteam2_attack_rejected_honest_accepted(path: str, cli_like: Evaluator):
    kernel = CORPUS / path
    problem = load_problem(kernel, kernel.parent / "ref_pytorch.py", kernel.parent / "spec.yaml", None)
    verdict = cli_like.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem),
                                unseen=True, time_it=False)
    if kernel.name.startswith("honest_"):
        assert verdict.passed, verdict.feedback()
    else:
        assert not verdict.passed, f"{path} passed: {verdict.notes}"
