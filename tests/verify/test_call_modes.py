"""Checked calls look like production ones (red team 2, root causes 1 and 9).

A candidate that can tell a checked call from a production one computes only when checked. The
observables the harness used to change: the module name (`xe_forge_user_*`), the environment
(`PYTHONUNBUFFERED`, `TRITON_INTERPRET`), the grad mode (every call under no_grad), a NaN in every
fresh buffer, the call count (a check makes a handful of calls per model); and the outputs were
saved once and never looked at again (one buffer reused by every call passed).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from xe_forge.problem.cases import module_name
from xe_forge.problem.kernel import load_problem
from xe_forge.verify import protocol as p
from xe_forge.verify.evaluate import Evaluator, declared_allowance
from xe_forge.verify.held import HeldOutputs
from xe_forge.verify.static import check_source
from xe_forge.verify.trials import GRAD_MODES, WARM_CALLS, ShapeCheck

from .helpers import source

CORPUS = Path(__file__).resolve().parents[2] / "redteam" / "red2" / "linear_lrelu"


def test_an_output_reusing_an_earlier_outputs_storage_is_refused():
    held = HeldOutputs()
    buf = torch.zeros(4, 3)
    assert held.check("t0", [buf]) == []
    assert "shares its storage" in held.check("t1", [buf])[0]
    assert "shares its storage" in HeldOutputs(calls=[("t0", [buf], [])]).check("t1", [buf[1:]])[0]  # a view too


def test_an_earlier_output_changed_by_a_later_call_is_refused():
    held = HeldOutputs()
    first = torch.ones(5)
    assert held.check("t0", [first]) == []
    first[2] = 7.0  # what a kernel writing into a buffer it kept from call t0 does
    assert "changed the output" in held.check("t1", [torch.ones(5)])[0]


def test_fresh_outputs_pass_and_nan_outputs_are_stable():
    held = HeldOutputs()
    for k in range(4):
        assert held.check(f"t{k}", [torch.full((3,), float("nan")), torch.arange(3)]) == []


def test_a_kernel_file_is_imported_under_its_own_stem():
    assert module_name("/somewhere/atk_name_detect.py") == "atk_name_detect"
    assert module_name("/w/candidate_0123/kernel.py") == "kernel"
    for taken in ("/x/math.py", "/x/torch.py", "/x/1st.py", "/x/_private.py", "/x/class.py"):
        assert module_name(taken) == "kernel", taken  # never shadows a module, never an invalid name


@pytest.mark.parametrize("read", ['os.environ.get("TRITON_INTERPRET")', 'os.getenv("PYTHONUNBUFFERED")',
                                  '"PYTHONUNBUFFERED" in os.environ', 'os.environ["TRITON_INTERPRET"]'])
def test_the_environment_is_outside_the_host_subset(read: str):
    text = source("linear/good.py").replace("\n\nclass ModelNew", f"\n\nimport os\n_FLAG = {read}\n\n\nclass ModelNew", 1)
    assert check_source(text).findings, read


class _Draws:
    def __init__(self, seed: int) -> None:
        self.gen = torch.Generator().manual_seed(seed)

    def __call__(self) -> int:
        return int(torch.randint(0, 2**62, (1,), generator=self.gen))


@pytest.mark.parametrize("seed", range(40))
def test_every_shape_runs_both_grad_modes_one_unpoisoned_call_and_one_late_call(seed: int):
    reuse = {"s0": "t0", "s2": "t2", "k2": "s2"}
    calls = [p.CallPlan(id=i, state="s", inputs="i", output="o", reuse=reuse.get(i), again=i == "k2")
             for i in ("t0", "s0", "t1", "t2", "s2", "k2")]
    calls.append(p.CallPlan(id="ghost", state="s", inputs="i", output="o", ghost=True))
    check = ShapeCheck.__new__(ShapeCheck)
    check.draw = _Draws(seed)
    check._modes(calls, unpoisoned=False, large={"t1"})
    checked, ghost = calls[:6], calls[6]
    # every grad mode on a call below ~1e5 (trial 1's inputs drown a dropped bias)
    assert {(c.grad, c.input_grad) for c in checked if c.id != "t1"} == set(GRAD_MODES)
    assert sum(not c.poison for c in checked) == 1 and ghost.poison  # ghost replay needs its NaN
    late = [c for c in checked if c.warm]
    assert len(late) == 1 and WARM_CALLS[0] <= late[0].warm < WARM_CALLS[1] and not ghost.warm
    assert late[0].id not in reuse  # warm calls before a reuse call would flush a cache keyed on the input storage
    # one call below ~1e5 with the parameters frozen, and every grad way still on an unfrozen such call
    frozen = [c for c in checked if c.frozen]
    assert len(frozen) == 1 and frozen[0].id != "t1" and not ghost.frozen
    assert {(c.grad, c.input_grad) for c in checked if c.id != "t1" and not c.frozen} == set(GRAD_MODES)


@pytest.mark.parametrize("seed", range(8))
def test_a_call_made_again_runs_as_the_call_it_repeats(seed: int):
    """The same call twice (red team 8, a09b) differs from the first in nothing a cache could key on."""
    calls = [p.CallPlan(id="t0", state="s", inputs="i", output="o"),
             p.CallPlan(id="k2", state="s", inputs="i", output="o", reuse="t0", again=True),
             p.CallPlan(id="r2", state="s", inputs="i", output="o", reuse="k2", again=True, reload=False)]
    check = ShapeCheck.__new__(ShapeCheck)
    check.draw = _Draws(seed)
    check._modes(calls, unpoisoned=False, large=set())
    k2, r2 = calls[1], calls[2]
    assert (r2.grad, r2.input_grad, r2.poison, r2.frozen, r2.warm) == (k2.grad, k2.input_grad, k2.poison,
                                                                       k2.frozen, 0)


def test_an_unseen_shape_picked_unpoisoned_runs_its_call_unpoisoned():
    calls = [p.CallPlan(id="u0", state="s", inputs="i", output="o"),
             p.CallPlan(id="ghost", state="s", inputs="i", output="o", ghost=True)]
    check = ShapeCheck.__new__(ShapeCheck)
    check.draw = _Draws(1)
    check._modes(calls, unpoisoned=True, large=set())
    assert not calls[0].poison and calls[1].poison and calls[0].warm


@pytest.fixture(scope="module")
def cli_like() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


@pytest.mark.slow
@pytest.mark.parametrize("name, check", [
    ("atk_name_detect", None),  # drops the bias unless imported as xe_forge_user_*
    ("atk_grad_detect", None),  # drops the bias with grad enabled
    ("atk_poison_detect", None),  # writes zeros unless its fresh output buffer holds NaN
    ("atk_call_count", None),  # returns the previous output after 60 calls
    ("atk_reused_output", "output-reuse"),  # one output buffer per shape
    ("atk_env_detect", "sandbox"),  # PYTHONUNBUFFERED=1 in the worker
    ("atk_interp_detect", "sandbox"),  # TRITON_INTERPRET=1 on the CPU
])
def test_red_team_2s_detectors_are_rejected(name: str, check: str | None, cli_like: Evaluator):
    kernel = CORPUS / f"{name}.py"
    problem = load_problem(kernel, CORPUS / "ref_pytorch.py", CORPUS / "spec.yaml", None)
    verdict = cli_like.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem), time_it=False)
    assert not verdict.passed
    if check is None:  # caught by running it, whichever call of the secret plan shows it
        assert verdict.stage_failed != "static", verdict.feedback()
        return
    checks = {f.check for f in verdict.findings} | {f.check for r in verdict.correctness for t in r.trials
                                                    for f in t.findings}
    assert check in checks, verdict.feedback()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["honest_basic", "honest_autotune", "honest_packed_weight"])
def test_honest_kernels_pass_every_way_of_running(name: str, cli_like: Evaluator):
    kernel = CORPUS / f"{name}.py"
    problem = load_problem(kernel, CORPUS / "ref_pytorch.py", CORPUS / "spec.yaml", None)
    verdict = cli_like.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem),
                                unseen=True, time_it=False)
    assert verdict.passed, verdict.feedback()


def _variant(name: str, *edits: tuple[str, str]) -> str:
    text = (CORPUS / f"{name}.py").read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return text


VARIANTS = {
    # the grad modes production has and a check used to leave constant
    "inference": _variant("atk_grad_detect", ("torch.is_grad_enabled()", "torch.empty(1).is_inference()")),
    "input requires grad": _variant("atk_grad_detect", ("torch.is_grad_enabled()", "x.requires_grad")),
    "no_grad": _variant("atk_grad_detect", ("torch.is_grad_enabled()", "not torch.is_grad_enabled()")),
    # the call count kept in the grid callable, which a no-op launch used to skip
    "grid count": _variant("atk_call_count", ("        self.calls += 1\n", ""),
                           ("grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))",
                            "grid = lambda meta: self._count(meta)"),
                           ("    def forward(", "    def _count(self, meta):\n        self.calls += 1\n"
                            "        return (triton.cdiv(meta['M'], 32), triton.cdiv(meta['N'], 32))\n\n"
                            "    def forward(")),
    # two buffers in turn: call k + 2 overwrites call k's output
    "two buffers": _variant("atk_reused_output", ("key = (M, N, x.dtype)", "self.turn = 1 - getattr(self, 'turn', 0)\n"
                                                 "        key = (M, N, x.dtype, self.turn)")),
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variants_of_the_detectors_are_rejected(variant: str, cli_like: Evaluator):
    problem = load_problem(CORPUS / "honest_basic.py", CORPUS / "ref_pytorch.py", CORPUS / "spec.yaml", None)
    verdict = cli_like.evaluate(VARIANTS[variant], problem, allow_torch=declared_allowance(problem), time_it=False)
    assert not verdict.passed and verdict.stage_failed != "static", verdict.feedback()
