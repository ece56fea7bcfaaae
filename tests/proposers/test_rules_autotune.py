"""autotune and group-swizzle: every config of a produced autotune decorator is run and checked, the
grid becomes a function of META whatever its original form, and unsuitable kernels are refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))  # rules_harness: a uniquely named helper
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)

from xe_forge.proposers.rules import Proposal, propose_rules  # noqa: E402
from xe_forge.targets.base import Toolchain  # noqa: E402

XPU = Toolchain(name="triton-xpu", version="3.7.2")
CUDA = Toolchain(name="triton", version="3.9.0")

# Trimmed for the interpreter: two or three small configs per class. The third gemm config is
# illegal on Xe (grf 256 with 64 warps) and must be dropped; the second is illegal on NVIDIA (64 warps).
SPACE = {
    "id": "test-space", "kind": "config_space", "toolchain": "triton-xpu>=3.6",
    "config_space": {
        "gemm": [
            {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_SIZE_M": 4, "grf_mode": "256", "num_warps": 32},
            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 16, "grf_mode": "128", "num_warps": 64, "num_stages": 2},
            {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 32, "grf_mode": "256", "num_warps": 64},
        ],
        "elementwise": [{"BLOCK_SIZE": 256, "num_warps": 4}, {"BLOCK_SIZE": 512, "num_warps": 8}],
        "reduction": [{"BLOCK_SIZE": 128, "BLOCK_N": 64, "num_warps": 4}, {"BLOCK_SIZE": 256, "BLOCK_N": 16, "num_warps": 8}],
    },
}
NVIDIA_SPACE = {"id": "nv-space", "kind": "config_space", "toolchain": "triton>=3.4", "config_space": {"gemm": [
    SPACE["config_space"]["gemm"][0],  # its grf_mode is stripped on NVIDIA
    {"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3, "maxnreg": 128},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 64},  # more warps than a CTA holds
]}}


def run(source: str, recipe: str, params: dict | None = None, *, target: str = "intel-xe2",
        toolchain: Toolchain = XPU, spaces: list[dict] | None = None) -> tuple[list[Proposal], list[str]]:
    entry = {"id": "r", "kind": "recipe", "recipe": {"name": recipe, "params": params or {}}}
    stage = "autotuning" if recipe == "autotune" else "persistent"  # autotuning adds config spaces itself
    proposals, skips = propose_rules(source, stage=stage, target=target, toolchain=toolchain,
                                     recipes=[entry], config_spaces=[SPACE] if spaces is None else spaces)
    return proposals, [s.reason for s in skips]


def applied(fixture: str, recipe: str = "autotune", params: dict | None = None, **kw) -> Proposal:  # noqa: ANN003
    proposals, reasons = run(h.fixture_source(fixture), recipe, params, **kw)
    assert not reasons and len(proposals) == 1, reasons
    return proposals[0]


# autotune --------------------------------------------------------------------------------------


def test_autotune_tuple_literal_grid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proposal = applied("gemm_literal")
    code = proposal.code
    assert proposal.entry_id == "test-space"
    assert 'grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))' in code
    assert "BLOCK_M=32" not in code and "num_warps=4" not in code
    assert 'key=["M", "N", "K"]' in code and "num_warps=64, num_stages=2)" in code and code.count("triton.Config(") == 2
    assert h.check_each_config(code, tmp_path) == 2
    h.cheap_autotuner(monkeypatch)
    h.check(code, tmp_path)  # several configs: the autotuner benchmarks them with the stand-in


def test_autotune_grid_variable_and_tile_variables(tmp_path: Path) -> None:
    code = applied("gemm_vars").code
    assert 'grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))' in code
    assert "BLOCK_M = 16" not in code and "BLOCK_M=BLOCK_M" not in code
    assert h.check_each_config(code, tmp_path) == 2


def test_autotune_existing_lambda_and_positional_tiles(tmp_path: Path) -> None:
    code = applied("gemm_lambda").code
    assert "mm_kernel[grid](a, b, c, M, N, K)\n" in code
    assert h.check_each_config(code, tmp_path) == 2


def test_autotune_1d_grid_through_an_intermediate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = applied("add_blocks").code
    assert 'grid = lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)' in code
    forward = code.split("def forward")[1]
    assert "BLOCK = 128" not in forward and "num_blocks" not in forward
    assert h.check_each_config(code, tmp_path) == 2
    h.cheap_autotuner(monkeypatch)
    h.check(code, tmp_path)


def test_autotune_keeps_a_tile_the_host_also_uses(tmp_path: Path) -> None:
    code = applied("partial_sums").code
    assert "partial_sum_kernel[(num_blocks,)](x, partial, n, BLOCK_SIZE=BLOCK)" in code  # warps tuned only
    assert "triton.Config({}, num_warps=8)" in code
    assert h.check_each_config(code, tmp_path) == 4


def test_autotune_keeps_a_computed_tile_and_restores_in_place_outputs(tmp_path: Path) -> None:
    code = applied("softmax_rows").code
    assert "BLOCK_SIZE=BLOCK_SIZE)" in code and 'key=["n_cols"]' in code
    assert h.check_each_config(code, tmp_path) == 2
    source = h.fixture_source("silu_1d").replace("tl.store(out_ptr + offs, y", "tl.atomic_add(out_ptr + offs, y")
    source = source.replace("torch.empty_like(x)", "torch.zeros_like(x)")
    proposals, _ = run(source, "autotune")
    assert 'restore_value=["out_ptr"]' in proposals[0].code
    assert h.check_each_config(proposals[0].code, tmp_path) == 2


def test_autotune_on_nvidia_drops_xpu_options_and_illegal_configs(tmp_path: Path) -> None:
    proposal = applied("gemm_literal", target="nvidia-sm90", toolchain=CUDA, spaces=[SPACE, NVIDIA_SPACE])
    assert proposal.entry_id == "nv-space"  # test-space needs triton-xpu
    assert "grf_mode" not in proposal.code and "num_warps=64" not in proposal.code
    assert "num_warps=4, num_stages=3, maxnreg=128)" in proposal.code
    assert proposal.code.count("triton.Config(") == 2
    assert h.check_each_config(proposal.code, tmp_path) == 2


def test_autotune_hoists_a_private_grid_when_the_grid_variable_is_shared(tmp_path: Path) -> None:
    code = applied("gemm_shared_grid").code
    assert 'grid_2 = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))' in code
    assert "_mm_kernel[grid_2](x, self.weight, y, M, N, K)\n" in code
    assert "_add_bias_kernel[grid](y, self.bias, out, M, N, BLOCK_M=16, BLOCK_N=16)" in code
    assert h.check_each_config(code, tmp_path) == 4


def test_autotune_tunes_a_tile_variable_that_a_shared_grid_reads(tmp_path: Path) -> None:
    source = h.fixture_source("gemm_shared_grid").replace(
        "grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))", "BM = 16\n        grid = (triton.cdiv(M, BM), triton.cdiv(N, 16))"
    ).replace("K, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)", "K, BLOCK_M=BM, BLOCK_N=16, BLOCK_K=16)")
    code = run(source, "autotune")[0][0].code
    assert 'grid_2 = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))' in code
    assert "_mm_kernel[grid_2](x, self.weight, y, M, N, K)" in code and "BM = 16" in code  # the other launch's
    assert h.check_each_config(code, tmp_path) == 4
    tiled = run(source, "tile-sizes", {"gemm": {"BLOCK_M": 32}})[0][0].code  # BM stays 16 for the other launch
    assert "_mm_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 16))](x, self.weight, y, M, N, K, BLOCK_M=32," in tiled
    assert "_add_bias_kernel[grid](" in tiled and "BM = 16" in tiled
    h.check(tiled, tmp_path)


@pytest.mark.parametrize(("fixture", "spaces", "reason"), [
    ("gemm_autotuned", None, "kernel already wrapped in @triton.autotune"),
    ("silu_1d", [{"id": "g", "config_space": {"gemm": [{"BLOCK_M": 64}]}}],
     "no config space for problem class 'elementwise' on intel-xe2"),
    ("silu_1d", [{"id": "one", "config_space": {"elementwise": [{"BLOCK_SIZE": 256}, {"BLOCK_SIZE": 256}]}}],
     "config space one leaves fewer than two legal configs for silu_kernel"),
])
def test_autotune_refusals(fixture: str, spaces: list | None, reason: str) -> None:
    proposals, reasons = run(h.fixture_source(fixture), "autotune", spaces=spaces)
    assert not proposals and reason in reasons[0]


# group-swizzle ---------------------------------------------------------------------------------


def test_group_swizzle_literal_grid(tmp_path: Path) -> None:
    code = applied("gemm_literal", "group-swizzle", {"GROUP_SIZE_M": 2}).code
    assert "matmul_kernel[(triton.cdiv(M, 32) * triton.cdiv(N, 32),)]" in code
    assert "GROUP_SIZE_M: tl.constexpr)" in code and "GROUP_SIZE_M=2," in code
    h.check(code, tmp_path)


def test_group_swizzle_partial_last_group(tmp_path: Path) -> None:
    # 36 rows / 16 = 3 row tiles with groups of 2: the last group is short.
    code = applied("gemm_vars", "group-swizzle", {"GROUP_SIZE_M": 2}).code
    assert "grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)" in code
    h.check(code, tmp_path)


def test_group_swizzle_then_autotune_tunes_the_group_size(tmp_path: Path) -> None:
    swizzled = applied("gemm_literal", "group-swizzle", {"GROUP_SIZE_M": 8}).code
    proposals, reasons = run(swizzled, "autotune")
    code = proposals[0].code
    assert '"GROUP_SIZE_M": 4' in code and '"GROUP_SIZE_M": 8' in code  # config default from the launch
    assert "GROUP_SIZE_M=8" not in code.split("class Model")[1]
    assert h.check_each_config(code, tmp_path) == 2


def test_group_swizzle_an_autotuned_kernel_with_a_meta_grid(tmp_path: Path) -> None:
    code = applied("gemm_autotuned", "group-swizzle", {"GROUP_SIZE_M": 2}).code
    assert 'triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)' in code
    h.check(code, tmp_path)


def test_group_swizzle_shared_grid_and_a_commented_last_parameter(tmp_path: Path) -> None:
    code = applied("gemm_shared_grid", "group-swizzle", {"GROUP_SIZE_M": 2}).code
    assert "BLOCK_K: tl.constexpr,  # K step of the inner loop\n    GROUP_SIZE_M: tl.constexpr,\n):" in code
    assert code.count("[(triton.cdiv(M, 16) * triton.cdiv(N, 16),)](") == 2
    h.check(code, tmp_path)


@pytest.mark.parametrize(("fixture", "reason"), [
    ("gemm_lambda", "grid is not 2D"),
    ("silu_1d", "grid is not 2D"),
])
def test_group_swizzle_refuses_1d_grids(fixture: str, reason: str) -> None:
    proposals, reasons = run(h.fixture_source(fixture), "group-swizzle", {"GROUP_SIZE_M": 8})
    assert not proposals and reason in reasons[0]


def test_autotune_prunes_configs_larger_than_the_problem(tmp_path: Path) -> None:
    """Dispatch by shape: a 7-row batch is never run with the 64-row tile, whatever the timings say."""
    import re

    import triton

    code = applied("gemm_literal", target="nvidia-sm90", toolchain=CUDA, spaces=[NVIDIA_SPACE]).code
    assert 'prune_configs_by={"early_config_prune": _fit_matmul_kernel}' in code
    source = re.search(r"def _fit_matmul_kernel\(.*?\n(?:    .*\n)+", code).group(0)
    namespace: dict = {}
    exec(compile(source, "prune", "exec"), {"triton": triton}, namespace)  # noqa: S102
    configs = [triton.Config({"BLOCK_M": m, "BLOCK_N": 64}) for m in (16, 64)]
    assert [c.kwargs["BLOCK_M"] for c in namespace["_fit_matmul_kernel"](configs, {"M": 7, "N": 40})] == [16]
    assert len(namespace["_fit_matmul_kernel"](configs, {"M": 100, "N": 100})) == 2
    assert h.check_each_config(code, tmp_path) == 2
