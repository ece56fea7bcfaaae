"""tile-sizes on kernels whose tiles @triton.heuristics chooses (seen on the H200 with
benchmarks/problems/accept/2_Conv2d_GroupNorm_Scale_MaxPool_Clamp: a candidate passed BLOCK=2048 at
the launch and rebuilt the grid as cdiv(numel, 2048) while the decorator kept BLOCK at 1024, so
half the output was never written). A decorator key is never set at a launch; the tiles the launch
owns still change, with the grid lambda following them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))  # rules_harness: a uniquely named helper
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)

from xe_forge.proposers.rules import propose_rules  # noqa: E402
from xe_forge.targets.base import Toolchain  # noqa: E402

CUDA = Toolchain(name="triton", version="3.9.0")
SM90_TILES = {"gemm": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
              "conv": {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, "elementwise": {"BLOCK_SIZE": 2048}}
CONV = Path(__file__).parents[2] / "benchmarks/problems/accept/2_Conv2d_GroupNorm_Scale_MaxPool_Clamp"


def tile_sizes(source: str, params: dict) -> tuple[str | None, str]:
    entry = {"id": "e", "kind": "recipe", "recipe": {"name": "tile-sizes", "params": params}}
    proposals, skips = propose_rules(source, stage="device_tuning", target="nvidia-sm90", toolchain=CUDA,
                                     recipes=[entry], config_spaces=[])
    if proposals:
        return proposals[0].code, proposals[0].rationale
    return None, "; ".join(s.reason for s in skips)


def test_a_tile_the_decorator_chooses_is_not_set_at_the_launch(tmp_path: Path) -> None:
    code, rationale = tile_sizes(h.fixture_source("heuristic_tiles"), SM90_TILES)
    assert code is not None, rationale
    h.check(code, tmp_path, atol=1e-2, rtol=1e-2)  # fp32 tl.dot is TF32 once an earlier test in this
    # process installed the interpreter's GPU-like TF32 rounding (targets/cpu.py): order-dependent otherwise
    assert "BLOCK_M=128," in code and 'meta["BLOCK_M"]' in code  # the launch's own tile, grid lambda kept
    assert "BLOCK=2048" not in code and "BLOCK_N=" not in code and "BLOCK_K=" not in code
    assert "scale_kernel: BLOCK is chosen by @triton.heuristics of scale_kernel" in rationale
    assert "BLOCK_N, BLOCK_K are chosen by @triton.heuristics of mm_kernel" in rationale


@pytest.mark.parametrize("decorator", ['@triton.heuristics(values={"BLOCK": pick})', "@triton.heuristics(CHOICES)"])
def test_a_decorator_tile_is_refused_however_the_decorator_gives_its_dict(decorator: str) -> None:
    source = h.fixture_source("heuristic_tiles").replace(
        '@triton.heuristics({"BLOCK": lambda args: 1024 if args["numel"] >= 1 << 20 else 64})', decorator)
    source = source.replace("class Model", 'pick = lambda args: 64  # noqa: E731\nCHOICES = {"BLOCK": pick}\n\n\nclass Model')
    code, _ = tile_sizes(source, {"elementwise": {"BLOCK_SIZE": 2048}})
    assert code is None


def test_the_conv_seed_gets_a_correct_candidate(tmp_path: Path) -> None:
    """The H200 seed itself, at its spec's ci shape, against its PyTorch reference."""
    code, rationale = tile_sizes((CONV / "kernel.py").read_text(), SM90_TILES)
    assert code is not None, rationale
    assert "BLOCK_M=128," in code and "BLOCK=2048" not in code
    candidate = h.load(code, tmp_path)
    reference = h.load((CONV / "kernel_pytorch.py").read_text(), tmp_path)
    init = [3, 8, 3, 4, (8, 1, 1), 4, 0.0, 1.0]
    torch.manual_seed(0)
    want_model = reference.Model(*init)
    got_model = candidate.Model(*init)
    got_model.load_state_dict(want_model.state_dict())
    x = torch.rand(2, 3, 17, 18)
    torch.testing.assert_close(got_model(x), want_model(x), atol=1e-4, rtol=1e-4)


def test_a_grid_rebuilt_at_the_launch_reads_the_decorators_tile_through_meta(tmp_path: Path) -> None:
    """BLOCK_M computed at the launch (so set there, grid rebuilt); BLOCK_N also passed, as 64, but
    the decorator makes it 16: the rebuilt grid must divide N by meta["BLOCK_N"], not by 64."""
    source = h.fixture_source("heuristic_tiles").replace(
        '"BLOCK_N": lambda args: max(16, min(64, triton.next_power_of_2(args["N"])))', '"BLOCK_N": lambda args: 16')
    source = source.replace("BLOCK_M=16,", "BLOCK_M=max(16, M // 64), BLOCK_N=64,")
    code, rationale = tile_sizes(source, {"gemm": {"BLOCK_M": 32}})
    assert code is not None, rationale
    assert 'lambda meta: (triton.cdiv(M, 32), triton.cdiv(N, meta["BLOCK_N"]))' in code
    h.check(code, tmp_path, atol=1e-2, rtol=1e-2)  # fp32 tl.dot is TF32 once an earlier test in this
    # process installed the interpreter's GPU-like TF32 rounding (targets/cpu.py): order-dependent otherwise
