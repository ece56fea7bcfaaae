"""Red team 5's corpus (written against verifier v3 from docs/VERIFIER.md, docs/SPEC.md, examples/ and
xe_forge/ only, never tests/; redteam/red5/RESULTS.md has all 29 attacks and the counts): every honest
kernel accepted, and the class closed since rejected, checked as `xe-forge check --device cpu` checks:
torch work asked for by the model with no frame of the kernel file on the stack (a Model that is an
nn.Sequential under another name, `forward` bound to torch's own as a class or instance attribute or a
property) is the candidate's (verify/frames.py), so a GEMM or softmax done there is refused at the audit;
a Python callable passed to a kernel (which the interpreter calls as host code inside the launch) is
refused at the launch (launch_record.py); an integer narrowing cast that changes a value computes
(`int64 -> uint8` past 255 is `& 255`, casts.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, declared_allowance

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "redteam" / "red5"
EXAMPLE12 = ROOT / "examples" / "12_Gemm_Multiply_LeakyReLU"  # gemm/'s attacks target its reference and spec
CLOSED = {"gemm/a01_seq_alias.py": "torch-compute", "gemm/a02_forward_classattr.py": "torch-compute",
          "gemm/a03_forward_instance.py": "torch-compute", "gemm/a22_property_forward.py": "torch-compute",
          "softmax/a04_token_copy.py": "torch-compute",
          "gemm/a05_constexpr_host.py": "host-subset",
          "int/a24_int_narrowing_cast.py": "torch-compute"}  # attack -> the finding that refuses it
HONEST = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/h[0-9]*.py")) + ["example 12"]


@pytest.fixture(scope="module")
def cli_like() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


def _verdict(path: str, evaluator: Evaluator, unseen: bool = True):
    kernel = EXAMPLE12 / "kernel.py" if path == "example 12" else CORPUS / path
    folder = kernel.parent if (kernel.parent / "ref.py").is_file() else EXAMPLE12
    reference = folder / ("ref.py" if folder != EXAMPLE12 else "kernel_pytorch.py")
    problem = load_problem(kernel, reference, folder / "spec.yaml", None)
    return evaluator.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem),
                              unseen=unseen, time_it=False)


def test_the_corpus_is_all_here():
    assert len(HONEST) == 4 and all((CORPUS / p).is_file() for p in CLOSED)


@pytest.mark.parametrize("path", sorted(CLOSED))
def test_each_closed_attack_is_refused_by_its_class(path: str, cli_like: Evaluator):
    verdict = _verdict(path, cli_like, unseen=False)  # refused at the visible shape already
    assert not verdict.passed, verdict.feedback()
    assert any(f.check == CLOSED[path] for f in verdict.findings), verdict.feedback()


@pytest.mark.slow
@pytest.mark.parametrize("path", HONEST)
def test_redteam5_honest_kernel_accepted(path: str, cli_like: Evaluator):
    verdict = _verdict(path, cli_like)
    assert verdict.passed, verdict.feedback()
