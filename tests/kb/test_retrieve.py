"""Retrieval: BM25 ranking, filters, whole entries within the budget, determinism."""

from __future__ import annotations

import pytest

from xe_forge.kb import estimate_tokens, render_entries, render_entry, retrieve
from xe_forge.kb.retrieve import rank, tokenize

from .helpers import XPU_35, XPU_36, XPU_372


def test_tokenize_splits_snake_case_and_drops_plurals():
    assert tokenize("The grf_mode of 32 warps") == ["grf_mode", "grf", "mode", "32", "warp"]


def test_grf_query_returns_grf_entries_first(bundled):
    got = retrieve(bundled, "GRF mode", stage="device_tuning", target="intel-xe2", toolchain=XPU_372)
    top = got[:6]
    assert all("grf" in render_entry(e).lower() for e in top), [e.id for e in top]
    assert "xpu-grf-mode-names-3-7-2" in [e.id for e in top]


def test_ranking_puts_the_named_subject_first(bundled):
    assert retrieve(bundled, "grf_mode names", stage="device_tuning", target="intel-xe2",
                    toolchain=XPU_372)[0].id == "xpu-grf-mode-names-3-7-2"
    assert retrieve(bundled, "block pointers removed", stage="block_io", target="nvidia-sm90",
                    toolchain=None)[0].id.startswith("block-ptr")


@pytest.mark.parametrize("toolchain, wanted, unwanted", [
    (XPU_35, "xpu-grf-mode-names-pre-3-6", "xpu-grf-mode-names-3-6"),
    (XPU_36, "xpu-grf-mode-names-3-6", "xpu-grf-mode-names-pre-3-6"),
    (XPU_372, "xpu-grf-mode-names-3-7-2", "xpu-grf-mode-names-3-6"),
])
def test_toolchain_filter_picks_the_grf_names_of_the_installed_version(bundled, toolchain, wanted, unwanted):
    ids = [e.id for e in retrieve(bundled, "grf_mode names", stage="device_tuning", target="intel-xe2",
                                  toolchain=toolchain, budget_tokens=100_000)]
    assert wanted in ids and unwanted not in ids


def test_target_filter(bundled):
    entries = retrieve(bundled, "warps", stage="device_tuning", target="nvidia-sm90", toolchain=None,
                       budget_tokens=100_000)
    assert entries and all(set(e.targets) & {"nvidia-sm90", "nvidia-any", "any"} for e in entries)
    assert "nvidia-num-warps-max-32" in [e.id for e in entries]


@pytest.mark.parametrize("budget", [150, 400, 1000, 2000, 5000])
def test_budget_is_respected_with_whole_entries(bundled, budget):
    got = retrieve(bundled, "tensor descriptor block io gemm", stage="block_io", target="intel-xe2",
                   toolchain=XPU_372, budget_tokens=budget)
    text = render_entries(got)
    assert estimate_tokens(text) <= budget
    for entry in got:  # every entry is there in full
        assert render_entry(entry) in text


def test_an_entry_too_large_is_skipped_and_smaller_ones_still_fit(bundled):
    query = "tensor descriptor gemm example"
    ranked = [e for e, _ in rank(bundled, query, stage="block_io", target="intel-xe2", toolchain=XPU_372)]
    sizes = {e.id: estimate_tokens(render_entry(e) + "\n") for e in ranked}
    big = max(ranked, key=lambda e: sizes[e.id])
    budget = sizes[big.id] - 1
    got = retrieve(bundled, query, stage="block_io", target="intel-xe2", toolchain=XPU_372, budget_tokens=budget)
    assert big not in got and got
    assert [e.id for e in got] == [e.id for e in ranked if e in got]  # still best-first


def test_retrieval_is_deterministic(bundled):
    args = dict(stage="fusion", target="intel-xe2", toolchain=XPU_372, budget_tokens=3000)
    first = [e.id for e in retrieve(bundled, "sigmoid epilogue exp", **args)]
    for _ in range(3):
        assert [e.id for e in retrieve(bundled, "sigmoid epilogue exp", **args)] == first


def test_empty_query_orders_constraints_first(bundled):
    ranked = rank(bundled, "", stage="dtype", target="intel-xe2", toolchain=XPU_372)
    kinds = [e.kind for e, _ in ranked]
    assert kinds[0] == "constraint" and kinds.index("recipe") > kinds.index("constraint")


def test_render_shows_scope_and_low_confidence(bundled):
    text = render_entry(bundled.get("block-ptr-removed-triton-xpu-3-9"))
    assert "toolchain: triton-xpu>=3.9" in text and "unverified" in text
    example = render_entry(bundled.get("example-softmax-rows"))
    assert "def _softmax_rows_kernel" in example  # the example's code is part of what the prompt gets
    space = render_entry(bundled.get("sm90-config-space"))
    assert "triton.Config({'BLOCK_M': 128" in space and "num_warps=8" in space
