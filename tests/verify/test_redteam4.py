"""Red team 4's corpus (written against verifier v3d from docs/VERIFIER.md, docs/SPEC.md, the README,
examples/ and xe_forge/ only; redteam/red4/RESULTS.md has the attacks, classes R1-R9 and the counts):
every honest kernel accepted, every attack on a class closed since rejected, checked as
`xe-forge check --device cpu` checks them. Attacks on classes still open are not listed here; they
are named in docs/VERIFIER.md (residual risks) and `redteam/red4/rerun.sh` runs the whole corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, declared_allowance

CORPUS = Path(__file__).resolve().parents[2] / "redteam" / "red4"
CLOSED = {  # attack -> the class its rejection closes
    "ew/a07_break_in_jit.py": "R5 Python the code generator refuses (jit_syntax)",
    "ew/a08_oob_store.py": "R5 out-of-bounds store (strict interpreter bounds)",
    "ew/a08b_oob_store_off_by_one.py": "R5 out-of-bounds store",
    "ew/a09_oob_load.py": "R5 out-of-bounds load",
    "ew/a21_real_launch_count.py": "R6 no-op launches visible to the grid callable",
    "ew/a21b_real_launch_count_25.py": "R6 no-op launches visible to the grid callable",
    "ew/a28_assume_false.py": "tl.assume checked by the interpreter",
    "ewbf/a29_bf16_bit_order.py": "R5 bf16 arithmetic on bit patterns",
    "neg/a18_conj_copy_negation.py": "R2 (static spelling)",
    "neg/a18b_conj_copy_negation_methods.py": "R2 a copy resolving a negative view computes",
}


def _honest() -> list[str]:
    return sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/h[0-9]*.py"))


@pytest.fixture(scope="module")
def cli_like() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


def _verdict(path: str, evaluator: Evaluator):
    kernel = CORPUS / path
    problem = load_problem(kernel, kernel.parent / "ref.py", kernel.parent / "spec.yaml", None)
    return evaluator.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem),
                              unseen=True, time_it=False)


def test_the_corpus_is_all_here():
    assert len(_honest()) == 15 and all((CORPUS / p).is_file() for p in CLOSED)


@pytest.mark.slow
@pytest.mark.parametrize("path", _honest())
def test_redteam4_honest_kernel_accepted(path: str, cli_like: Evaluator):
    verdict = _verdict(path, cli_like)
    assert verdict.passed, verdict.feedback()


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(CLOSED))
def test_redteam4_attack_on_a_closed_class_rejected(path: str, cli_like: Evaluator):
    verdict = _verdict(path, cli_like)
    assert not verdict.passed, f"{path} ({CLOSED[path]}) passed: {verdict.notes}"
