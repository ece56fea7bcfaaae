"""drop-dot-upcast, fp64-to-fp32 and exp2-activations: candidates run correctly under the
interpreter, and kernels without the pattern are refused with a precise reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))  # rules_harness: a uniquely named helper
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)

from xe_forge.proposers.rules import Proposal, Skip, propose_rules  # noqa: E402
from xe_forge.targets.base import Toolchain  # noqa: E402

XPU = Toolchain(name="triton-xpu", version="3.7.2")


def propose(fixture: str, recipe: str, params: dict | None = None) -> tuple[list[Proposal], list[Skip]]:
    entry = {"id": f"test-{recipe}", "kind": "recipe", "recipe": {"name": recipe, "params": params or {}}}
    return propose_rules(h.fixture_source(fixture), stage="dtype", target="intel-xe2", toolchain=XPU,
                         recipes=[entry], config_spaces=[])


def only_proposal(fixture: str, recipe: str, params: dict | None = None) -> Proposal:
    proposals, skips = propose(fixture, recipe, params)
    assert not skips, skips
    assert len(proposals) == 1
    return proposals[0]


def only_skip(fixture: str, recipe: str, params: dict | None = None) -> str:
    proposals, skips = propose(fixture, recipe, params)
    assert not proposals
    assert len(skips) == 1 and skips[0].recipe == recipe and skips[0].entry_id == f"test-{recipe}"
    return skips[0].reason


# drop-dot-upcast -------------------------------------------------------------------------------


def test_drop_dot_upcast_inline_casts_become_in_place_accumulation(tmp_path: Path) -> None:
    proposal = only_proposal("gemm_literal", "drop-dot-upcast")
    assert "acc = tl.dot(a, b, acc, input_precision=\"ieee\")" in proposal.code
    assert ".to(tl.float32)" not in proposal.code
    assert proposal.entry_id == "test-drop-dot-upcast" and proposal.expected_effect
    h.check(proposal.code, tmp_path)


def test_drop_dot_upcast_named_casts_on_loads(tmp_path: Path) -> None:
    proposal = only_proposal("gemm_vars", "drop-dot-upcast")
    assert "acc = tl.dot(x, w, acc" in proposal.code
    assert "other=0.0)\n" in proposal.code and ".to(tl.float32)" not in proposal.code
    h.check(proposal.code, tmp_path)


def test_drop_dot_upcast_works_inside_an_autotuned_kernel(tmp_path: Path) -> None:
    h.check(only_proposal("gemm_autotuned", "drop-dot-upcast").code, tmp_path)


@pytest.mark.parametrize(("fixture", "reason"), [
    ("gemm_lambda", "no tl.dot operand is cast to float32"),
    ("silu_1d", "kernel has no tl.dot"),
])
def test_drop_dot_upcast_refuses_without_the_pattern(fixture: str, reason: str) -> None:
    assert reason in only_skip(fixture, "drop-dot-upcast")


def test_drop_dot_upcast_refuses_an_upcast_that_is_not_a_load() -> None:
    source = h.fixture_source("gemm_literal").replace("tl.dot(a.to(tl.float32)", "tl.dot((a * 2).to(tl.float32)")
    proposals, skips = propose_rules(source, stage="dtype", target="intel-xe2", toolchain=XPU,
                                     recipes=[{"id": "x", "recipe": {"name": "drop-dot-upcast"}}], config_spaces=[])
    assert not proposals and "is not a tile loaded by tl.load" in skips[0].reason


# fp64-to-fp32 ----------------------------------------------------------------------------------


def test_fp64_to_fp32_in_kernel_and_intermediate_host_buffer(tmp_path: Path) -> None:
    proposal = only_proposal("rowsum_fp64", "fp64-to-fp32")
    assert "tl.float64" not in proposal.code and "torch.float64" not in proposal.code
    assert "sums.to(x.dtype)" in proposal.code
    h.check(proposal.code, tmp_path, atol=1e-4, rtol=1e-4)


def test_fp64_to_fp32_refuses_to_change_a_returned_dtype() -> None:
    reason = only_skip("scale_fp64_out", "fp64-to-fp32")
    assert "only on returned tensors (out)" in reason


def test_fp64_to_fp32_refuses_without_float64() -> None:
    assert only_skip("gemm_literal", "fp64-to-fp32") == "no float64 in the kernels or in the host code that launches them"


# exp2-activations ------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["silu_1d", "softmax_rows"])
def test_exp2_activations_rewrites_and_stays_correct(fixture: str, tmp_path: Path) -> None:
    proposal = only_proposal(fixture, "exp2-activations")
    assert "tl.exp(" not in proposal.code and "tl.exp2(" in proposal.code and "1.4426950408889634" in proposal.code
    h.check(proposal.code, tmp_path, atol=1e-5, rtol=1e-5)


def test_exp2_parenthesises_compound_arguments() -> None:
    assert "tl.exp2((-x) * 1.4426950408889634)" in only_proposal("silu_1d", "exp2-activations").code


def test_exp2_activations_refuses_kernels_without_exp() -> None:
    assert "kernel calls no tl.exp" in only_skip("gemm_literal", "exp2-activations")
