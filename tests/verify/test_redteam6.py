"""Red team 6's corpus (written against the verifier from docs/VERIFIER.md, docs/SPEC.md, examples/ and
xe_forge/ only, never tests/; redteam/red6/RESULTS.md has all 64 attacks, 27 honest kernels and the
counts). What is closed since, each by its class:

- a launch argument must be kernel data (an allowlist: tensors, numbers, strings, None, dtypes, Triton's
  own objects, tuples of these): a host class, an instance with a method or a tuple holding a function,
  passed to a kernel and called in its body, ran host numpy on the interpreter's tiles (a22b-e);
- ghost replay where the reference's output is near zero or constant is inconclusive, not a finding
  (an honest zero-initialised ReLU GEMM at a far shape, h17);
- padding is data movement in the static scan as in the dispatch audit (F.pad, h16).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify import protocol as p
from xe_forge.verify.evaluate import Evaluator, declared_allowance
from xe_forge.verify.models import Comparison, CorrectnessReport
from xe_forge.verify.trials import ShapeCheck

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "redteam" / "red6"
EXAMPLE76 = ROOT / "examples" / "76_Gemm_Add_ReLU"
CLOSED = {"a/a22b_constexpr_class_numpy.py": "a class", "a/a22c_constexpr_class_gemm.py": "a class",
          "a/a22d_constexpr_instance_method.py": "object", "a/a22e_constexpr_tuple_fn.py": "a Python callable"}
HONEST = ["h/h16_tryimport_pad76.py", "h/h17a_zeroinit76.py", "h/h16b_tryimport_copy76.py"]


@pytest.fixture(scope="module")
def cli_like() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


def _verdict(path: str, evaluator: Evaluator, unseen: bool = True):
    problem = load_problem(CORPUS / path, EXAMPLE76 / "kernel_pytorch.py", EXAMPLE76 / "spec.yaml", None)
    return evaluator.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem),
                              unseen=unseen, time_it=False)


@pytest.mark.parametrize("path", sorted(CLOSED))
def test_host_objects_passed_to_a_kernel_are_refused_at_the_launch(path: str, cli_like: Evaluator):
    verdict = _verdict(path, cli_like, unseen=False)
    assert not verdict.passed, verdict.feedback()
    refusal = next(f for f in verdict.findings if f.check == "host-subset")
    assert "launch argument ACT is" in refusal.message and CLOSED[path] in refusal.message


@pytest.mark.slow
@pytest.mark.parametrize("path", HONEST)
def test_redteam6_honest_kernel_accepted(path: str, cli_like: Evaluator):
    verdict = _verdict(path, cli_like)
    assert verdict.passed, verdict.feedback()


def _ghost_report(degenerate: bool) -> CorrectnessReport:
    check = ShapeCheck.__new__(ShapeCheck)
    report = CorrectnessReport(variant="unseen 3", dtype="float32", rtol=1e-4, atol=1e-4)
    same = p.ItemResult(passed=True, comparisons=[Comparison(name="output", shape=[2, 2], passed=True,
                                                             degenerate=degenerate)])
    check._launches_and_ghost(report, {"t0": p.CallResult(id="t0", launches=1)}, p.Compared(results={"ghost": same}),
                              p.CallResult(id="ghost"))
    return report


def test_a_ghost_that_matches_a_flat_reference_proves_nothing_either_way():
    flat = _ghost_report(degenerate=True)
    assert flat.findings == [] and flat.ghost_changed is None and "inconclusive" in flat.notes[0]
    live = _ghost_report(degenerate=False)  # where the reference varies, a no-op kernel matching it condemns
    assert [f.check for f in live.findings] == ["ghost"] and live.ghost_changed is False


def test_a_literal_getattr_is_the_attribute_it_names():
    """`getattr(nn.modules.module, "register_module_forward_hook")` is the attribute itself: the static scan
    refuses it as it refuses the dotted spelling (a55, a process-wide hook that persists in a warm worker)."""
    from xe_forge.verify.static import check_source

    source = (CORPUS / "a" / "a55_global_hook.py").read_text()
    assert any("hooks run code the verifier does not see" in f.message for f in check_source(source).findings)
    honest = source.replace('getattr(nn.modules.module, "register_module_forward_hook")', 'getattr(nn, "Linear")')
    assert not any(f.check == "sandbox" for f in check_source(honest).findings)


def test_a_kernel_handed_to_partial_is_told_how_to_launch_not_that_nothing_launches():
    """h20 launched through `functools.partial(kernel[grid], ...)`: still refused (a launch is
    `kernel[grid](...)`), but the message names the line and the form, not "nothing launches"."""
    from xe_forge.verify.static import check_source

    found = [f for f in check_source((CORPUS / "h" / "h20_partial_launch76.py").read_text()).findings
             if f.check == "no-launch"]
    assert len(found) == 1 and found[0].line is not None
    assert "is handed on, not called" in found[0].message and "nothing in the file" not in found[0].message
