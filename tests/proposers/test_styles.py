"""Every recipe on 14 seeds written in other styles than the examples (tests/proposers/styles/):
each applies to the GEMM kernel or gives a reason that names the construct, and (slow) every
candidate passes the verifier at the example's ci shapes and its unseen batch sizes."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from xe_forge.kb import load_kb
from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.rules import Proposal, Skip, propose_rules
from xe_forge.stages import load_stages
from xe_forge.targets.base import Toolchain

ROOT = Path(__file__).resolve().parents[2]
STYLES = sorted((Path(__file__).parent / "styles").glob("s*.py"))
STAGES = ("dtype", "fusion", "block_io", "persistent", "device_tuning", "autotuning")
TARGETS = {"nvidia-sm90": Toolchain(name="triton", version="3.6.0"),
           "intel-xe2": Toolchain(name="triton-xpu", version="3.7.2")}

# style -> recipe -> text the skip reason (or, for a partial application, the rationale) must contain.
# Recipes not listed must apply to the style's GEMM kernel.
REFUSALS: dict[str, dict[str, str]] = {
    "s05": {"tensor-descriptors": "passes *args/**kwargs", "group-swizzle": "passes *args/**kwargs",
            "persistent-loop": "passes *args/**kwargs", "tile-sizes": "passes *args/**kwargs",
            "autotune": "passes *args/**kwargs"},
    "s08": {"group-swizzle": "grid is not 2D with `pid_m = tl.program_id(0)`"},
}
GEMM_KERNELS = {"s01": "gemm_bias_kernel", "s02": "_mm", "s03": "linear_kernel", "s04": "matmul_bias",
                "s05": "gemm_kernel", "s06": "fc_kernel", "s07": "linear_fwd", "s08": "gemm_relu_bias",
                "s09": "gemm_bias", "s10": "matmul_bias_kernel", "s11": "fc_kernel", "s12": "gemm_kernel",
                "s13": "linear_act_kernel", "s14": "gemm_kernel"}
NOT_GEMM_RECIPES = {"fp64-to-fp32", "fuse-epilogue"}
pytestmark = pytest.mark.usefixtures("trace_in_this_process")


def example_of(style: Path) -> Path:
    number = style.stem.split("_")[1].removeprefix("ex")
    return next(d for d in (ROOT / "examples").iterdir() if d.name.split("_")[0] == number)


@cache
def proposals(style: Path, target: str) -> tuple[dict[str, list[Proposal]], dict[str, list[Skip]]]:
    kb, stages = load_kb(), load_stages()
    toolchain = TARGETS[target]
    spaces = [e.model_dump(mode="json", exclude_none=True) for e in kb.filter(kind="config_space", target=target,
                                                                               toolchain=toolchain)]
    reference = (example_of(style) / "kernel_pytorch.py").read_text()
    applied: dict[str, list[Proposal]] = {}
    skipped: dict[str, list[Skip]] = {}
    for stage in STAGES:
        entries = [e.model_dump(mode="json", exclude_none=True) for e in kb.filter(
            stage=stage, kind="recipe", target=target, toolchain=toolchain) if e.recipe.name in stages[stage].recipes]
        found, skips = propose_rules(style.read_text(), stage=stage, target=target, toolchain=toolchain,
                                     recipes=entries, config_spaces=spaces, reference=reference)
        for p in found:
            applied.setdefault(p.recipe, []).append(p)
        for s in skips:
            skipped.setdefault(s.recipe, []).append(s)
    return applied, skipped


def test_there_are_at_least_twelve_styles_each_mapped_to_an_example() -> None:
    assert len(STYLES) >= 12
    assert all((example_of(s) / "kernel_pytorch.py").is_file() for s in STYLES)


@pytest.mark.parametrize("style", STYLES, ids=lambda p: p.stem)
def test_every_recipe_applies_to_the_gemm_or_names_the_construct(style: Path) -> None:
    applied, skipped = proposals(style, "nvidia-sm90")
    key, gemm = style.stem[:3], GEMM_KERNELS[style.stem[:3]]
    refusals = REFUSALS.get(key, {})
    for recipe in set(applied) | set(skipped):
        if recipe in refusals:
            texts = [s.reason for s in skipped.get(recipe, [])] + [p.rationale for p in applied.get(recipe, [])]
            assert any(refusals[recipe] in t for t in texts), (recipe, texts)
        elif recipe == "fp64-to-fp32":
            assert "no float64" in skipped[recipe][0].reason
        elif recipe == "conv-implicit-gemm":  # the seeds are Triton GEMMs: no torch convolution to rewrite
            assert recipe not in applied and "runs no torch convolution" in skipped[recipe][0].reason
        else:
            assert recipe in applied, (recipe, [s.reason for s in skipped.get(recipe, [])])
            if recipe not in NOT_GEMM_RECIPES:
                done = [p.rationale.split("(not applied to")[0] for p in applied[recipe]]
                assert any(gemm in d for d in done), (recipe, done)


@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES, ids=lambda p: p.stem)
def test_intel_target_gets_the_same_coverage(style: Path) -> None:
    applied, skipped = proposals(style, "intel-xe2")
    expected = {"fuse-epilogue", "tensor-descriptors", "tile-sizes", "autotune", "launch-options"}
    missing = {r for r in expected if r not in applied and r not in REFUSALS.get(style.stem[:3], {})}
    assert not missing, {r: [s.reason for s in skipped.get(r, [])] for r in missing}


@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES, ids=lambda p: p.stem)
def test_every_candidate_passes_the_verifier(style: Path, cpu_evaluator) -> None:  # noqa: ANN001
    example = example_of(style)
    problem = load_problem(style, reference=example / "kernel_pytorch.py", spec=example / "spec.yaml")
    applied, _ = proposals(style, "nvidia-sm90")
    for recipe, found in applied.items():
        for proposal in found:
            verdict = cpu_evaluator.evaluate(proposal.code, problem, unseen=True, allow_torch=set())
            assert verdict.passed, (recipe, proposal.entry_id, [f.render() for f in verdict.findings[:2]])
