"""The entry schema: kinds, blocks, stages, targets, toolchain ranges, checks."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from xe_forge.kb.schema import Condition, Entry, ForbidComboCheck

from .helpers import make_entry


def test_minimal_constraint_entry_is_valid():
    entry = Entry.model_validate(make_entry())
    assert entry.kind == "constraint" and entry.constraint.check is None


@pytest.mark.parametrize("field, value, needle", [
    ("stages", ["tuning"], "unknown stage 'tuning'"),
    ("targets", ["intel-xe3"], "unknown target 'intel-xe3'"),
    ("toolchain", "pytorch>=2.0", "must start with 'triton'"),
    ("toolchain", "triton-xpu>=>3.6", "invalid version specifier"),
    ("id", "Not_Kebab", "kebab-case"),
    ("confidence", "certain", "confidence"),
])
def test_bad_field_is_rejected_with_a_precise_message(field, value, needle):
    with pytest.raises(ValidationError) as err:
        Entry.model_validate(make_entry(**{field: value}))
    assert needle in str(err.value)


def test_kind_needs_its_own_block_and_no_other():
    with pytest.raises(ValidationError, match="needs a 'pattern:' block"):
        Entry.model_validate(make_entry(kind="pattern"))
    with pytest.raises(ValidationError, match="must not carry pattern"):
        Entry.model_validate(make_entry(pattern={"before": "a", "after": "b", "rationale": "c"}))


def test_unknown_fields_are_rejected():
    with pytest.raises(ValidationError, match="extra"):
        Entry.model_validate(make_entry(severity="high"))


def test_recipe_name_must_be_a_known_transform():
    recipe = {"name": "make-it-fast", "expected_effect": "speed"}
    with pytest.raises(ValidationError, match="drop-dot-upcast"):
        Entry.model_validate(make_entry(kind="recipe", constraint=None, recipe=recipe))


def test_tile_sizes_params_are_keyed_by_problem_class():
    recipe = {"name": "tile-sizes", "params": {"matmul": {"BLOCK_M": 64}}, "expected_effect": "x"}
    with pytest.raises(ValidationError, match="problem class"):
        Entry.model_validate(make_entry(kind="recipe", constraint=None, recipe=recipe))


def test_config_space_problem_classes_are_checked():
    with pytest.raises(ValidationError, match="gemm-epilogue"):
        Entry.model_validate(make_entry(kind="config_space", constraint=None,
                                        config_space={"matmul": [{"num_warps": 4}]}))


def test_check_kinds_are_discriminated():
    entry = Entry.model_validate(make_entry(constraint={"rule": "r", "check": {
        "kind": "forbid_combo", "when": [{"option": "grf_mode", "in": ["256"]}, {"option": "num_warps", "gt": 32}]}}))
    assert isinstance(entry.constraint.check, ForbidComboCheck)
    with pytest.raises(ValidationError):
        Entry.model_validate(make_entry(constraint={"rule": "r", "check": {"kind": "max_value", "option": "x"}}))


def test_condition_compares_text_and_numbers():
    cond = Condition.model_validate({"option": "grf_mode", "in": ["256", 512]})
    assert cond.holds("256") and cond.holds(256) and cond.holds("512") and not cond.holds("128")
    warps = Condition.model_validate({"option": "num_warps", "gt": 32})
    assert warps.holds(64) and not warps.holds(32) and not warps.holds("64")
