"""propose_rules as the pipeline calls it: which entries apply, what a Skip says, and that a broken
kernel, entry or transform costs a Skip, never an exception."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))  # rules_harness: a uniquely named helper
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)

from xe_forge.proposers.rules import Proposal, Skip, propose_rules  # noqa: E402
from xe_forge.proposers.rules.context import REGISTRY  # noqa: E402
from xe_forge.proposers.rules.cst_tools import parse  # noqa: E402
from xe_forge.proposers.rules.kernels import find_kernels  # noqa: E402
from xe_forge.targets.base import Toolchain  # noqa: E402

XPU = Toolchain(name="triton-xpu", version="3.7.2")
SPACE = {"id": "ew-space", "kind": "config_space",
         "config_space": {"elementwise": [{"BLOCK_SIZE": 256, "num_warps": 4}, {"BLOCK_SIZE": 512, "num_warps": 8}]}}


def recipe(name: str, entry_id: str = "e", **extra: object) -> dict:
    return {"id": entry_id, "kind": "recipe", "recipe": {"name": name, "params": {}}, **extra}


def call(source: str, recipes: list[dict], *, stage: str = "dtype", spaces: list[dict] | None = None,
         toolchain: Toolchain = XPU) -> tuple[list[Proposal], list[Skip]]:
    return propose_rules(source, stage=stage, target="intel-xe2", toolchain=toolchain, recipes=recipes,
                         config_spaces=spaces or [])


def test_one_proposal_per_applicable_entry_with_its_fields() -> None:
    entry = recipe("exp2-activations", "xe2-exp2", stages=["algorithmic", "fusion"])
    entry["recipe"]["expected_effect"] = "exp2 is one instruction"
    proposals, skips = call(h.fixture_source("silu_1d"), [entry, recipe("drop-dot-upcast", "xe2-upcast")],
                            stage="fusion")
    assert [p.recipe for p in proposals] == ["exp2-activations"]
    assert proposals[0].entry_id == "xe2-exp2" and proposals[0].expected_effect == "exp2 is one instruction"
    assert proposals[0].rationale.endswith(".") and "silu_kernel" in proposals[0].rationale
    assert skips == [Skip(recipe="drop-dot-upcast", entry_id="xe2-upcast",
                          reason="silu_kernel: kernel has no tl.dot")]


@pytest.mark.parametrize(("entry", "reason"), [
    (recipe("unroll-everything"), "unknown recipe name 'unroll-everything'"),
    (recipe("exp2-activations", toolchain="triton-xpu>=3.8"), "entry needs triton-xpu>=3.8; this run has triton-xpu 3.7.2"),
    (recipe("exp2-activations", toolchain="cuda>=12"), "toolchain range is malformed"),
    (recipe("exp2-activations", stages=["fusion"]), "entry is for stages ['fusion'], not 'dtype'"),
])
def test_entries_that_do_not_fit_the_run_are_skipped(entry: dict, reason: str) -> None:
    proposals, skips = call(h.fixture_source("silu_1d"), [entry])
    assert not proposals and reason in skips[0].reason


def test_non_recipe_entries_are_ignored() -> None:
    assert call(h.fixture_source("silu_1d"), [{"id": "c", "kind": "constraint", "constraint": {}}]) == ([], [])


def test_autotuning_stage_applies_config_spaces_without_a_recipe_entry() -> None:
    proposals, skips = call(h.fixture_source("silu_1d"), [], stage="autotuning", spaces=[SPACE])
    assert not skips and proposals[0].recipe == "autotune" and proposals[0].entry_id == "ew-space"


def test_identical_candidates_are_reported_once() -> None:
    proposals, skips = call(h.fixture_source("silu_1d"), [recipe("exp2-activations", "a"), recipe("exp2-activations", "b")])
    assert len(proposals) == 1 and skips[0].reason == "same code as the exp2-activations proposal from a"


def test_unparsable_source_is_a_skip() -> None:
    proposals, skips = call("def broken(:\n", [recipe("exp2-activations")])
    assert not proposals and skips[0].reason.startswith("source does not parse")


def test_file_without_kernels_is_a_skip() -> None:
    _, skips = call("import torch\n", [recipe("autotune")], spaces=[SPACE])
    assert skips[0].reason == "no module-level @triton.jit kernel in the file"


def test_a_crashing_transform_becomes_a_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(ctx: object) -> None:
        raise KeyError("oops")

    monkeypatch.setitem(REGISTRY, "exp2-activations", boom)
    _, skips = call(h.fixture_source("silu_1d"), [recipe("exp2-activations")])
    assert skips[0].reason == "internal error in the exp2-activations transform: KeyError: 'oops'"


def test_partial_application_names_the_kernels_left_alone() -> None:
    proposals, _ = call(h.fixture_source("partial_sums"), [
        {"id": "t", "recipe": {"name": "tile-sizes", "params": {"reduction": {"BLOCK_P": 64}}}}])
    assert "BLOCK_P=64" in proposals[0].code
    assert proposals[0].rationale.endswith(
        "(not applied to partial_sum_kernel: tile sizes BLOCK_P are not constexpr parameters of partial_sum_kernel "
        "and no tile of it plays their role).")


@pytest.mark.parametrize(("fixture", "classes"), [
    ("gemm_literal", ["gemm"]),
    ("gemm_vars", ["gemm-epilogue"]),
    ("softmax_rows", ["reduction"]),
    ("silu_1d", ["elementwise"]),
    ("partial_sums", ["reduction", "reduction"]),
    ("gemm_shared_grid", ["gemm", "elementwise"]),
])
def test_problem_class_detection(fixture: str, classes: list[str]) -> None:
    kernels = find_kernels(parse(h.fixture_source(fixture)))
    assert [k.problem_class for k in kernels.values()] == classes


def test_conv_kernels_are_their_own_class() -> None:
    source = h.fixture_source("gemm_literal").replace("matmul_kernel", "conv2d_implicit_gemm_kernel")
    assert find_kernels(parse(source))["conv2d_implicit_gemm_kernel"].problem_class == "conv"
