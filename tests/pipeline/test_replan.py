"""A stage that took a candidate source's kernel (a port) hands the stages after it that kernel's issues
and plan (issue 30): the rules start from the best verified kernel, lowered or not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xe_forge.config import RunRequest, Settings
from xe_forge.pipeline.analyze import analyze_source
from xe_forge.pipeline.progress import Progress
from xe_forge.pipeline.replan import replanned
from xe_forge.pipeline.run import optimize
from xe_forge.proposers.base import Proposal, StageRequest
from xe_forge.stages import load_stages

from .helpers import REPO, candidates

LOWER = REPO / "tests" / "proposers" / "lower"
sys.path.insert(0, str(LOWER))
from recorded import lowering, reference, spec  # noqa: E402

GEMM = "12_Gemm_Multiply_LeakyReLU"


def port_source() -> str:
    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower.service import port_for

    problem = load_problem(reference(GEMM), reference(GEMM), spec(GEMM))
    port, why = port_for(problem, [lowering(GEMM)])
    assert port is not None, why
    return port.source


def test_inductor_tiles_are_fixed_tiles_to_the_analysis() -> None:
    issues = analyze_source(port_source())
    assert {"small-tiles", "no-autotune"} <= {i.kind for i in issues}  # `XBLOCK=512`, `BLOCK_M: tl.constexpr = 128`


def test_a_ports_issues_replace_the_inputs_for_the_stages_to_come() -> None:
    stages = load_stages()
    seed = analyze_source((REPO / "examples" / GEMM / "kernel.py").read_text())
    seed = [i for i in seed if i.stage not in ("autotuning", "device_tuning")]  # an input already tuned
    done = ["dtype", "fusion"]
    issues, plan, added = replanned(port_source(), seed, ["dtype", "fusion", "persistent"], done, stages,
                                    lambda s: s != "block_io", fixed=False)
    assert added == ["device_tuning", "autotuning"]  # the port's, in their canonical order; block_io cannot serve
    assert plan == ["dtype", "fusion", "persistent", "device_tuning", "autotuning"]
    assert [i for i in issues if i.stage in done] == [i for i in seed if i.stage in done]  # what ran keeps its own
    assert [i for i in issues if i.stage not in done] == [i for i in analyze_source(port_source())
                                                          if i.stage not in done]
    _, fixed_plan, none = replanned(port_source(), seed, ["fusion"], ["fusion"], stages, lambda s: True, fixed=True)
    assert fixed_plan == ["fusion"] and none == []  # --stages is the user's plan


class RecordedPort:
    """The `lower` source, offering the recorded H200 lowering's port (the CPU cannot lower)."""

    source = "lower"
    skip = None

    def __init__(self, code: str) -> None:
        self.code, self.offered = code, False

    def available(self) -> bool:
        return True

    def reset(self) -> None:
        self.offered = False

    def next(self, request: StageRequest) -> Proposal | None:
        if self.offered:
            return None
        self.offered = True
        return Proposal(code=self.code, recipe="inductor-lowering", source="lower")


@pytest.mark.slow
def test_the_stages_after_a_port_tune_the_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import xe_forge.proposers.lower.proposer as lower

    problem = tmp_path / "problem"
    problem.mkdir()
    seed = (REPO / "examples" / GEMM / "kernel.py").read_text()
    # an input the analysis finds nothing to autotune in (its text names triton.autotune): only the port's
    # own issues can plan the autotuning stage
    (problem / "kernel.py").write_text(seed.replace('"""Naive', '"""Tuned by hand, no triton.autotune. Naive', 1))
    (problem / "kernel_pytorch.py").write_text(reference(GEMM).read_text())
    (problem / "spec.yaml").write_text(spec(GEMM).read_text())
    code = port_source()
    monkeypatch.setattr(lower, "candidate_sources", lambda problem, evaluator, budget=None: {"lower": RecordedPort(code)})
    request = RunRequest(kernel=str(problem / "kernel.py"), device="cpu", engine="rules", target="nvidia-sm90",
                         stages=None, max_iters=2, run_dir=tmp_path / "runs")
    result = optimize(request, Settings(_env_file=None), progress=Progress(quiet=True))
    assert "autotuning" in result.report.plan  # planned from the port's issues, after fusion took it
    fusion = candidates(result.run_dir, "fusion")
    assert fusion[0]["source"] == "lower" and fusion[0]["accepted"]
    tuned = [c for c in candidates(result.run_dir) if c["stage"] == "autotuning" and c["accepted"]]
    assert tuned and "triton_tem_fused_addmm_t_0" in tuned[0]["code"] and "@triton.autotune" in tuned[0]["code"]
    output = (Path(result.run_dir) / "output.py").read_text()
    assert "triton_tem_fused_addmm_t_0" in output and "@triton.autotune" in output
