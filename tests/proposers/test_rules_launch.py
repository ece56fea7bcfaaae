"""launch-options and tile-sizes: legal options per target/toolchain, tiles changed with the grid
kept consistent (checked by running the candidates), and refusals where consistency is unprovable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))  # rules_harness: a uniquely named helper
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)

from xe_forge.proposers.rules import Proposal, propose_rules  # noqa: E402
from xe_forge.proposers.rules.grf import Tile, pin_grf_for_many_warps, weigh_large_grf  # noqa: E402
from xe_forge.proposers.rules.options import legalize, legalize_config  # noqa: E402
from xe_forge.targets.base import Toolchain  # noqa: E402

XPU = Toolchain(name="triton-xpu", version="3.7.2")
XPU_OLD = Toolchain(name="triton-xpu", version="3.5.0")
CUDA = Toolchain(name="triton", version="3.9.0")


def run(source: str, recipe: str, params: dict, *, target: str = "intel-xe2",
        toolchain: Toolchain = XPU) -> tuple[list[Proposal], list[str]]:
    entry = {"id": "e", "kind": "recipe", "recipe": {"name": recipe, "params": params}}
    proposals, skips = propose_rules(source, stage="device_tuning", target=target, toolchain=toolchain,
                                     recipes=[entry], config_spaces=[])
    return proposals, [s.reason for s in skips]


def applied(fixture: str, recipe: str, params: dict, **kw) -> str:  # noqa: ANN003
    proposals, reasons = run(h.fixture_source(fixture), recipe, params, **kw)
    assert not reasons and len(proposals) == 1, reasons
    return proposals[0].code


def refused(source: str, recipe: str, params: dict, **kw) -> str:  # noqa: ANN003
    proposals, reasons = run(source, recipe, params, **kw)
    assert not proposals and len(reasons) == 1
    return reasons[0]


# launch-options --------------------------------------------------------------------------------


def test_launch_options_on_xe2_replace_and_append(tmp_path: Path) -> None:
    code = applied("gemm_literal", "launch-options", {"num_warps": 32, "num_stages": 2, "grf_mode": "256"})
    # a 32x32 tile fits in 128 registers: large GRF would only halve the threads per XVE
    assert 'num_warps=32,\n            num_stages=2,\n            grf_mode="128",\n        )' in code
    h.check(code, tmp_path)


def _big_tiles(fixture: str) -> str:
    return h.fixture_source(fixture).replace("BLOCK_M=32, BLOCK_N=32, BLOCK_K=32", "BLOCK_M=256, BLOCK_N=256, BLOCK_K=32")


def test_large_grf_is_kept_for_a_tile_that_needs_the_registers() -> None:
    proposals, reasons = run(_big_tiles("gemm_literal"), "launch-options", {"num_warps": 32, "grf_mode": "256"})
    assert not reasons and 'grf_mode="256"' in proposals[0].code
    assert "kept grf_mode='256': the 256x256x32 tile over 32 warps needs about 144 registers" in proposals[0].rationale


def test_large_grf_is_traded_for_occupancy_when_the_tile_fits() -> None:
    proposals, _ = run(h.fixture_source("gemm_literal"), "launch-options", {"num_warps": 32, "grf_mode": "256"})
    rationale = proposals[0].rationale
    assert "grf_mode='128' instead of '256': the 32x32x32 tile over 32 warps needs about 4 of 128" in rationale
    assert "from 8 to 4 [xpu-large-grf-halves-occupancy]" in rationale


def test_an_unknown_tile_keeps_the_recipes_grf_mode() -> None:
    source = h.fixture_source("gemm_literal").replace("BLOCK_M=32,", "BLOCK_M=int(M ** 0.5),")
    proposals, _ = run(source, "launch-options", {"num_warps": 32, "grf_mode": "256"})
    assert 'grf_mode="256"' in proposals[0].code and "xpu-large-grf-halves-occupancy" not in proposals[0].rationale


def test_launch_options_translate_grf_names_for_old_triton_xpu() -> None:
    code = applied("gemm_vars", "launch-options", {"gemm": {"num_warps": 16, "grf_mode": "128"}}, toolchain=XPU_OLD)
    assert 'grf_mode="small"' in code
    proposals, _ = run(_big_tiles("gemm_literal"), "launch-options", {"num_warps": 16, "grf_mode": "256"},
                       toolchain=XPU_OLD)
    assert 'grf_mode="large"' in proposals[0].code


def test_launch_options_drop_grf_256_with_more_than_32_warps_and_pin_128() -> None:
    proposals, _ = run(h.fixture_source("gemm_vars"), "launch-options", {"num_warps": 64, "grf_mode": "256"})
    code, rationale = proposals[0].code, proposals[0].rationale
    assert "num_warps=64" in code and 'grf_mode="128"' in code
    assert "cannot be used with num_warps > 32" in rationale
    assert "[xpu-default-grf-retry-breaks-many-warps]" in rationale


@pytest.mark.parametrize(("toolchain", "pinned"), [(XPU_OLD, 'grf_mode="small"'), (XPU, 'grf_mode="128"'),
                                                   (Toolchain(name="triton-xpu", version="3.9.0"), None)])
def test_more_than_32_warps_on_the_default_grf_get_an_explicit_128(toolchain: Toolchain, pinned: str | None) -> None:
    proposals, _ = run(h.fixture_source("silu_1d"), "launch-options", {"num_warps": 64}, toolchain=toolchain)
    code = proposals[0].code
    assert "num_warps=64" in code
    assert (pinned in code) if pinned else ("grf_mode" not in code)


def test_32_warps_or_an_explicit_grf_mode_are_not_pinned() -> None:
    for params in ({"num_warps": 32}, {"num_warps": 64, "grf_mode": "auto"}):
        proposals, _ = run(h.fixture_source("silu_1d"), "launch-options", params)
        assert "grf_mode=\"128\"" not in proposals[0].code, params


def test_no_grf_mode_is_pinned_or_weighed_on_nvidia() -> None:
    assert pin_grf_for_many_warps({"num_warps": 64}, {}, "nvidia-sm90", CUDA) == ({"num_warps": 64}, None)
    assert weigh_large_grf({"grf_mode": "256"}, Tile(16, 16, 16), "nvidia-sm90", CUDA) == ({"grf_mode": "256"}, None)


def test_launch_options_never_emit_xpu_options_on_nvidia(tmp_path: Path) -> None:
    code = applied("silu_1d", "launch-options", {"num_warps": 8, "grf_mode": "256", "warp_size": 16},
                   target="nvidia-sm90", toolchain=CUDA)
    assert "num_warps=8" in code and "grf_mode" not in code and "warp_size" not in code
    h.check(code, tmp_path)


@pytest.mark.parametrize(("fixture", "params", "toolchain", "reason"), [
    ("gemm_autotuned", {"num_warps": 8}, XPU, "its configs own the launch options"),
    ("silu_1d", {"grf_mode": "512"}, Toolchain(name="triton-xpu", version="3.7.0"), "[xpu-grf-mode-names-3-6]"),
    ("silu_1d", {"num_warps": 12}, XPU, "[num-warps-power-of-two] num_warps=12 is not a power of two"),
    ("gemm_literal", {"num_warps": 4}, XPU, "already uses"),
])
def test_launch_options_refusals(fixture: str, params: dict, toolchain: Toolchain, reason: str) -> None:
    assert reason in refused(h.fixture_source(fixture), "launch-options", params, toolchain=toolchain)


@pytest.mark.parametrize(("options", "target", "toolchain", "legal"), [
    ({"grf_mode": "large", "num_warps": 32}, "intel-xe2", XPU, {"grf_mode": "256", "num_warps": 32}),
    ({"grf_mode": "128", "warp_size": 16}, "intel-xe-hpc", XPU_OLD, {"grf_mode": "small", "threads_per_warp": 16}),
    ({"grf_mode": "512"}, "intel-xe2", XPU, {"grf_mode": "512"}),
    ({"num_warps": 64, "grf_mode": "256"}, "intel-xe2", XPU, {"num_warps": 64}),
    ({"num_warps": 64, "warp_size": 32}, "intel-xe2", XPU, {"warp_size": 32}),
    ({"num_warps": 8, "maxnreg": 128, "grf_mode": "256"}, "nvidia-sm90", CUDA, {"num_warps": 8, "maxnreg": 128}),
    ({"grf_mode": "256", "num_stages": 2}, "intel-xe2", CUDA, {"num_stages": 2}),  # XPU option, upstream triton
])
def test_legalize_by_target_and_toolchain(options: dict, target: str, toolchain: Toolchain, legal: dict) -> None:
    assert legalize(options, target, toolchain)[0] == legal


def test_launch_options_respect_class_preconditions(tmp_path: Path) -> None:
    entry = {"id": "ew", "recipe": {"name": "launch-options", "params": {"num_warps": 16},
                                    "preconditions": ["the kernel has no tl.dot"]}}
    proposals, skips = propose_rules(h.fixture_source("gemm_shared_grid"), stage="device_tuning", target="intel-xe2",
                                     toolchain=XPU, recipes=[entry], config_spaces=[])
    assert not skips
    code = proposals[0].code
    assert "BLOCK_M=16, BLOCK_N=16, num_warps=16)" in code and "BLOCK_K=16)" in code
    assert "not applied to _mm_kernel: precondition 'the kernel has no tl.dot' does not hold" in proposals[0].rationale
    h.check(code, tmp_path)


# tile-sizes ------------------------------------------------------------------------------------


def test_tile_sizes_literal_2d_grid_with_equal_old_tiles(tmp_path: Path) -> None:
    # BLOCK_M and BLOCK_N are both 32: the grid's two literal 32s are told apart by program-id axis.
    code = applied("gemm_literal", "tile-sizes", {"gemm": {"BLOCK_M": 64, "BLOCK_N": 16, "BLOCK_K": 16}})
    assert "(triton.cdiv(M, 64), triton.cdiv(N, 16))" in code and "BLOCK_M=64, BLOCK_N=16, BLOCK_K=16" in code
    h.check(code, tmp_path)


def test_tile_sizes_in_variables_rewrite_the_assignments(tmp_path: Path) -> None:
    code = applied("gemm_vars", "tile-sizes", {"gemm": {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}})
    assert "BLOCK_M = 32\n        BLOCK_N = 32\n        BLOCK_K = 32" in code  # gemm-epilogue uses gemm's
    h.check(code, tmp_path)


def test_tile_sizes_positional_tiles_with_a_meta_grid(tmp_path: Path) -> None:
    code = applied("gemm_lambda", "tile-sizes", {"gemm": {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 16}})
    assert "mm_kernel[grid](a, b, c, M, N, K, 16, 64, BLOCK_K=16)" in code
    h.check(code, tmp_path)


def test_tile_sizes_1d_round_up_division(tmp_path: Path) -> None:
    code = applied("silu_1d", "tile-sizes", {"elementwise": {"BLOCK_SIZE": 256}})
    assert "silu_kernel[((n + 255) // 256,)](x, out, n, BLOCK_SIZE=256)" in code
    h.check(code, tmp_path)


def test_tile_sizes_module_constant_striding_a_loop(tmp_path: Path) -> None:
    code = applied("rowsum_fp64", "tile-sizes", {"reduction": {"BLOCK_N": 64}})
    assert "\nBLOCK = 64\n" in code
    h.check(code, tmp_path)


def test_tile_sizes_variable_shared_with_host_buffers_and_two_kernels(tmp_path: Path) -> None:
    code = applied("partial_sums", "tile-sizes", {"reduction": {"BLOCK_SIZE": 256, "BLOCK_P": 64}})
    assert "BLOCK = 256" in code and "BLOCK_P=64" in code
    h.check(code, tmp_path)


def test_tile_sizes_grid_through_an_intermediate(tmp_path: Path) -> None:
    h.check(applied("add_blocks", "tile-sizes", {"elementwise": {"BLOCK_SIZE": 512}}), tmp_path)


def test_tile_sizes_give_one_launch_its_own_copy_of_a_shared_grid(tmp_path: Path) -> None:
    code = applied("gemm_shared_grid", "tile-sizes", {"gemm": {"BLOCK_M": 32, "BLOCK_N": 64}})
    assert "_mm_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 64))](" in code
    assert "_add_bias_kernel[grid](" in code and "grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))" in code
    h.check(code, tmp_path)


@pytest.mark.parametrize(("fixture", "params", "reason"), [
    ("softmax_rows", {"reduction": {"BLOCK_SIZE": 256}},
     "BLOCK_SIZE is computed at the launch (`BLOCK_SIZE = triton.next_power_of_2(n_cols)`)"),
    ("gemm_autotuned", {"gemm": {"BLOCK_M": 64}}, "its configs own the tile sizes"),
    ("gemm_literal", {"gemm": {"BLOCK_SIZE": 64}}, "BLOCK_SIZE are not constexpr parameters of matmul_kernel and no tile"),
    ("gemm_literal", {"elementwise": {"BLOCK_SIZE": 64}}, "nothing for matmul_kernel's problem class 'gemm'"),
    ("gemm_literal", {"gemm": {"BLOCK_M": 48}}, "BLOCK_M=48 is not a power of two >= 16"),
    ("gemm_literal", {"gemm": {"BLOCK_M": 32}}, "already uses these tile sizes"),
])
def test_tile_sizes_refusals(fixture: str, params: dict, reason: str) -> None:
    assert reason in refused(h.fixture_source(fixture), "tile-sizes", params)


def test_tile_sizes_rebuild_a_grid_that_hides_the_tile(tmp_path: Path) -> None:
    source = h.fixture_source("gemm_vars").replace(
        "grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))", "grid = self.grid_for(M, N)")
    proposals, _ = run(source, "tile-sizes", {"gemm": {"BLOCK_M": 32}})
    assert "at its launch (grid rebuilt from the kernel)" in proposals[0].rationale
    assert "[(triton.cdiv(M, 32), triton.cdiv(N, BLOCK_N))](" in proposals[0].code
    assert "grid_for" not in proposals[0].code  # the helper-built grid only this launch read is gone
    h.check(proposals[0].code, tmp_path)


def test_tile_sizes_rebuild_a_grid_with_a_stray_literal(tmp_path: Path) -> None:
    source = h.fixture_source("gemm_literal").replace("triton.cdiv(N, 32))", "triton.cdiv(N, 32) * 32 // 32)")
    proposals, _ = run(source, "tile-sizes", {"gemm": {"BLOCK_N": 64}})
    assert "outside a recognised division" in proposals[0].rationale or "grid rebuilt" in proposals[0].rationale
    h.check(proposals[0].code, tmp_path)


def test_autotune_configs_with_more_than_32_warps_get_an_explicit_128() -> None:
    config = {"BLOCK_SIZE": 1024, "warp_size": 16, "num_warps": 64}
    assert legalize_config(config, {"BLOCK_SIZE"}, "intel-xe2", XPU) == {"BLOCK_SIZE": 1024, "warp_size": 16,
                                                                         "num_warps": 64, "grf_mode": "128"}
    assert "grf_mode" not in legalize_config({"num_warps": 16}, set(), "intel-xe2", XPU)
