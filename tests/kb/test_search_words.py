"""`xe-forge kb search` as a user types it: compound words either way (layernorm, layer norm), word
families (normalization), and the norm entries first for a norm query, read from the command's table."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.kb.retrieve import tokenize

runner = CliRunner()


def _ids(query: str, limit: int = 5) -> list[str]:
    result = runner.invoke(app, ["kb", "search", query, "--limit", str(limit)])
    assert result.exit_code == 0, result.output
    return re.findall(r"│\s+[\d.]+\s+│\s+([a-z0-9-]+)\s+│", result.output)


def test_compound_words_and_word_families_meet():
    assert {"layer", "norm", "layernorm"} <= set(tokenize("LayerNorm")) & set(tokenize("layer norm"))
    assert "layernorm" in tokenize("layer_norm") and "rmsnorm" in tokenize("RMS norm")
    assert "norm" in tokenize("normalization") and "norm" in tokenize("normalizes")
    assert "layernorm" not in tokenize("the layer and the norm")  # joined only when adjacent


@pytest.mark.parametrize("query", ["layernorm", "LayerNorm", "layer norm", "layer_norm"])
def test_a_layernorm_search_finds_the_layernorm_entries_first(query: str):
    ids = _ids(query)
    assert ids and ids[0] == "example-layernorm-rows", ids
    assert "recipe-autotune-norm-rows-xe2" in ids[:3]  # the recipe for norm rows is found by its name
    hopper = "recipe-fuse-epilogue-sm90-tdesc"
    assert hopper not in ids or ids.index(hopper) > max(ids.index(i) for i in ids if "norm" in i)


@pytest.mark.parametrize("query", ["rmsnorm", "rms norm"])
def test_an_rmsnorm_search_finds_the_rmsnorm_entries_first(query: str):
    assert set(_ids(query)[:2]) == {"example-rmsnorm-rows", "pattern-rmsnorm-rows"}


def test_a_softmax_rows_search_finds_row_softmax():
    ids = _ids("softmax rows", limit=3)
    assert ids[0] == "example-softmax-rows" and "xe2-norm-rows-config-space" in ids
