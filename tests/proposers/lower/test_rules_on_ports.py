"""The rules proposer's recipes on lowered modules (issue 30, item 4): a port is a Triton module like any
other, so autotune spaces, tiles and launch options apply to its kernels, and every candidate either
passes the CPU verifier or is refused with a reason.

The ports are the recorded GPU lowerings (fixtures/) packaged as the pipeline packages them.
"""

from __future__ import annotations

import re

import libcst as cst
import pytest
from recorded import lowering, reference, spec

from xe_forge.kb import load_kb
from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.base import StageRequest
from xe_forge.proposers.lower.package import package
from xe_forge.proposers.lower.service import port_for
from xe_forge.proposers.rules.kernels import find_kernels
from xe_forge.proposers.rules.normalize import normalized
from xe_forge.proposers.rules.proposer import RulesProposer
from xe_forge.stages import load_stages
from xe_forge.targets.base import Toolchain

GEMM = "12_Gemm_Multiply_LeakyReLU"
GEMM_ROWS = "18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp"
SM90 = ("nvidia-sm90", Toolchain(name="triton", version="3.6.0"))
XE2 = ("intel-xe2", Toolchain(name="triton-xpu", version="3.7.2"))


def packaged(name: str) -> str:
    return package(lowering(name), reference(name).read_text()).source


def proposals(source: str, stage: str, target: tuple[str, Toolchain] = SM90) -> tuple[dict, list[dict]]:
    """{recipe: Proposal} of the KB's recipes for `stage`, and the skips."""
    rules = RulesProposer(load_kb(), *target)
    found = rules.candidates(StageRequest(stage=load_stages()[stage], code=source, reference=""))
    return {p.recipe: p for p in found}, rules.skips.get(stage, [])


def launch_line(code: str, kernel: str) -> str:
    return next(line for line in code.splitlines() if line.strip().startswith(f"{kernel}["))


def test_split_launch_grids_read_as_one_tuple() -> None:
    source = packaged(GEMM)
    assert "triton_tem_fused_addmm_t_0[(63 + s59) // 64 * ((127 + s77) // 128), 1, 1](" in source
    module = normalized(cst.parse_module(source))
    assert "triton_tem_fused_addmm_t_0[((63 + s59) // 64 * ((127 + s77) // 128), 1, 1)](" in module.code


def test_body_tiles_of_a_template_become_launch_parameters() -> None:
    code = normalized(cst.parse_module(packaged(GEMM))).code
    kernels = find_kernels(cst.parse_module(code))
    tem = kernels["triton_tem_fused_addmm_t_0"]
    assert {"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"} <= set(tem.constexprs)
    assert "BLOCK_M: tl.constexpr = 128" not in code and "EVEN_K: tl.constexpr = False" in code  # ints only
    assert "BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, GROUP_M=8" in launch_line(code, "triton_tem_fused_addmm_t_0")
    # a template that promised its K tile divides K (no K mask) keeps its tiles where they are
    promised = packaged(GEMM).replace("EVEN_K: tl.constexpr = False", "EVEN_K: tl.constexpr = True")
    assert "BLOCK_K: tl.constexpr = 32" in normalized(cst.parse_module(promised)).code


@pytest.mark.parametrize(("name", "kernel", "cls"), [
    ("21_Conv2d_Add_Scale_Sigmoid_GroupNorm", "triton_tem_fused_convolution_0", "conv"),
    ("21_Conv2d_Add_Scale_Sigmoid_GroupNorm", "triton_poi_fused_add_convolution_mul_native_group_norm_sigmoid_2",
     "elementwise"),  # named after the convolution it follows; no tl.dot
    ("21_Conv2d_Add_Scale_Sigmoid_GroupNorm", "triton_red_fused_add_convolution_mul_native_group_norm_sigmoid_1",
     "reduction"),
    ("33_Gemm_Scale_BatchNorm", "triton_per_fused__native_batch_norm_legit_functional_addmm_copy__mul_2",
     "reduction"),  # reduces only through the packaged `_xf_welford` helper
    (GEMM, "triton_tem_fused_addmm_t_0", "gemm"),
])
def test_problem_classes_of_inductor_kernels(name: str, kernel: str, cls: str) -> None:
    assert find_kernels(cst.parse_module(packaged(name)))[kernel].problem_class == cls


def test_autotune_wraps_every_kernel_of_a_gemm_port_and_keeps_its_own_config() -> None:
    found, skips = proposals(packaged(GEMM), "autotuning")
    code = found["autotune"].code
    assert code.count("@triton.autotune(") == 2, skips
    assert 'grid = lambda META: (triton.cdiv(s59, META["BLOCK_N"]) * (triton.cdiv(s77, META["BLOCK_M"])), 1, 1)' in code
    assert 'key=["ks0", "ks1"]' in code and 'restore_value=["in_out_ptr0"]' in code  # epilogue writes in place
    configs = re.findall(r"triton\.Config\(.*\)", code[code.index("def _fit_triton_tem"):])
    # Inductor's own choice (128x64x32, 4 warps, 3 stages) stays in the space, after the KB's
    assert configs[-1] == 'triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3)'
    assert len(configs) == 7


def test_tiles_and_launch_options_apply_to_a_port() -> None:
    found, _ = proposals(packaged(GEMM), "device_tuning")
    tiles = launch_line(found["tile-sizes"].code, "triton_tem_fused_addmm_t_0")
    assert "(127 + s59) // 128 * ((127 + s77) // 128)" in tiles and "BLOCK_N=128, BLOCK_K=64" in tiles
    assert "XBLOCK=2048" in launch_line(found["tile-sizes"].code, "triton_poi_fused_addmm_leaky_relu_1")
    assert "num_warps=8" in launch_line(found["launch-options"].code, "triton_tem_fused_addmm_t_0")


def test_persistent_reductions_and_pinned_templates_are_refused_with_reasons() -> None:
    found, skips = proposals(packaged("17_Conv2d_InstanceNorm_Divide"), "device_tuning")
    reasons = " ".join(s["reason"] for s in skips if s["recipe"] == "tile-sizes")
    assert "tile-sizes" not in found
    # every size pinned: the grid `[7938, 2, 1]` does not show the tile, so it cannot change
    assert "triton_tem_fused_convolution_0 tiles its grid with BLOCK_M but the grid" in reasons
    assert "_xf_welford_combine" not in reasons  # a combine function is a helper, not an unlaunched kernel
    found, _ = proposals(packaged("33_Gemm_Scale_BatchNorm"), "device_tuning")
    per = launch_line(found["tile-sizes"].code,
                      "triton_per_fused__native_batch_norm_legit_functional_addmm_copy__mul_2")
    assert "XBLOCK=32" in per  # a reduction gets no elementwise block


def test_xe2_spaces_apply_to_a_port_too() -> None:
    found, skips = proposals(packaged(GEMM), "autotuning", XE2)
    code = found["autotune"].code
    assert "grf_mode" in code and code.count("@triton.autotune(") == 2, skips


def _verify_stage_candidates(name: str, evaluator, stages: list[str]) -> list[str]:
    problem = load_problem(reference(name), reference(name), spec(name))
    port, why = port_for(problem, [lowering(name)])
    assert port is not None, why
    seen = []
    for stage in stages:
        for recipe, proposal in proposals(port.source, stage)[0].items():
            verdict = evaluator.evaluate(proposal.code, problem, allow_torch=set(), unseen=True, name=recipe)
            assert verdict.passed, f"{stage}/{recipe}: {verdict.summary()}"
            seen.append(recipe)
    return seen


def test_rules_candidates_on_a_gemm_port_pass_the_verifier(cpu_evaluator) -> None:
    assert _verify_stage_candidates(GEMM, cpu_evaluator, ["device_tuning", "autotuning"]) == [
        "launch-options", "tile-sizes", "autotune"]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "recipes"), [
    (GEMM_ROWS, ["launch-options", "tile-sizes", "autotune", "exp2-activations"]),
    ("21_Conv2d_Add_Scale_Sigmoid_GroupNorm", ["launch-options", "tile-sizes", "autotune"]),
])
def test_rules_candidates_on_row_reduction_and_conv_ports_pass_the_verifier(name: str, recipes: list[str],
                                                                              cpu_evaluator) -> None:
    assert _verify_stage_candidates(name, cpu_evaluator, ["device_tuning", "autotuning", "algorithmic"]) == recipes
