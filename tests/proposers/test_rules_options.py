"""The rules proposer's legalisation (xe_forge/proposers/rules/options.py) answers from the same option
table as the verifier: a wrong-version option is dropped with the entry that forbids it."""

from __future__ import annotations

import pytest

from xe_forge.proposers.rules.options import known_options, legalize, legalize_config
from xe_forge.targets.base import Toolchain


def xpu(version: str) -> Toolchain:
    return Toolchain(name="triton-xpu", version=version)


@pytest.mark.parametrize(("options", "version", "entry"), [
    ({"advanced_path": True}, "3.6.0", "xpu-advanced-path-removed-3-6"),
    ({"split_barriers_scope": "Workgroup"}, "3.7.2", "xpu-split-barriers-scope-removed-3-7"),
    ({"use_barrier": True}, "3.5.0", "xpu-use-barrier-unknown-pre-3-7"),
])
def test_wrong_version_options_are_dropped_with_their_entry_id(options, version, entry):
    legal, dropped = legalize(options, "intel-xe2", xpu(version))
    assert legal == {} and len(dropped) == 1 and f"[{entry}]" in dropped[0]


@pytest.mark.parametrize(("options", "version"), [
    ({"advanced_path": True}, "3.5.0"),
    ({"split_barriers_scope": "Subgroup"}, "3.6.0"),
    ({"use_barrier": True}, "3.7.0"),
])
def test_the_same_options_are_kept_on_their_own_version(options, version):
    assert legalize(options, "intel-xe-hpc", xpu(version)) == (options, [])


def test_the_proposer_knows_every_keyword_of_the_table():
    assert {"advanced_path", "split_barriers_scope", "use_barrier", "grf_mode", "maxnreg"} <= known_options()
    assert "BLOCK_M" not in known_options()


def test_a_combination_is_repaired_by_dropping_the_option_its_entry_names_first():
    legal, dropped = legalize({"grf_mode": "256", "num_warps": 64}, "intel-xe2", xpu("3.7.2"))
    assert legal == {"num_warps": 64} and "[xpu-grf-large-max-32-warps]" in dropped[0]


def test_a_config_that_needs_a_removed_option_is_not_offered():
    config = {"BLOCK_M": 128, "num_warps": 8, "grf_mode": "large"}
    assert legalize_config(config, {"BLOCK_M"}, "intel-xe2", xpu("3.5.0")) == config
    assert legalize_config(config, {"BLOCK_M"}, "intel-xe2", xpu("3.7.2")) == {**config, "grf_mode": "256"}
    assert legalize_config({"BLOCK_M": 128, "advanced_path": True}, {"BLOCK_M"}, "intel-xe2", xpu("3.6.0")) is None
