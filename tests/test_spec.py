"""Spec parsing (xe_forge/spec.py): the Xe-Forge format, our `unseen:`/`precision:` additions, and
one clear InputError (exit code 2) for every malformed spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from xe_forge.errors import InputError
from xe_forge.problem.spec import init_args, input_shapes, load_spec, safe_eval

FIXTURE = Path(__file__).parent / "fixtures_foundation" / "problems" / "conv_bias.yaml"

# A minimal valid spec; malformed cases below change one thing in it.
BASE = """
inputs:
  X: {shape: [BATCH, IN_FEAT]}
inits:
  - in_features: IN_FEAT
  - bias_shape: [OUT_FEAT, 1, 1]
ci:
  - dtype: float32
    dims: {BATCH: 8, IN_FEAT: 64, OUT_FEAT: 32}
    flop: "2*BATCH*IN_FEAT*OUT_FEAT"
"""


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def spec():
    return load_spec(FIXTURE)


# ------------------------------------------------------------------ the format


def test_variants_are_read_in_declaration_order_with_ci_the_default(spec):
    assert list(spec.variants) == ["ci", "bench-gpu", "small-fp32"]
    assert spec.variant_name(None) == "ci"
    assert spec.variant(None) is spec.variants["ci"][0]
    assert spec.variant("bench-gpu").dims["BATCH"] == 128


def test_first_declared_variant_is_the_default_without_ci(tmp_path):
    text = BASE.replace("ci:", "quick:") + "\nfull:\n  - dims: {BATCH: 64, IN_FEAT: 64, OUT_FEAT: 32}\n"
    spec = load_spec(write(tmp_path, text))
    assert spec.variant_name(None) == "quick"
    assert spec.variant(None).dims["BATCH"] == 8


def test_input_shapes_bind_dims_in_declaration_order(spec):
    shapes = input_shapes(spec, spec.variant("ci"))
    assert shapes == {"X": (2, 3, 6, 5), "scale": (8,), "idx": (2,)}
    assert list(shapes) == ["X", "scale", "idx"]


def test_params_choose_the_call_order(tmp_path):
    text = """
inputs:
  A: {shape: [M, K]}
  B: {shape: [K, N]}
ci:
  - params: [B, A]
    dims: {M: 2, K: 3, N: 4}
"""
    spec = load_spec(write(tmp_path, text))
    assert list(input_shapes(spec, spec.variant("ci")).items()) == [("B", (3, 4)), ("A", (2, 3))]


def test_inits_resolve_dim_names_literals_and_mixed_lists_as_tuples(spec):
    args = init_args(spec, spec.variant("ci"))
    assert args == [3, 8, 3, (8, 1, 1), 1e-5]
    assert isinstance(args[3], tuple), "a list init must reach the constructor as a tuple (bias_shape)"


def test_inits_follow_the_variant_being_run(spec):
    assert init_args(spec, spec.variant("bench-gpu"))[:4] == [64, 128, 3, (128, 1, 1)]


def test_init_may_be_arithmetic_over_dims(tmp_path):
    spec = load_spec(write(tmp_path, BASE.replace("in_features: IN_FEAT", "in_features: IN_FEAT*2")))
    assert init_args(spec, spec.variant("ci"))[0] == 128


@pytest.mark.parametrize(("variant", "dtype"), [("ci", "bfloat16"), ("bench-gpu", "float16"),
                                                 ("small-fp32", "float32")])
def test_dtype_aliases_become_torch_names(spec, variant, dtype):
    assert spec.variant(variant).dtype == dtype


def test_input_level_dtype_and_distribution(spec):
    assert spec.inputs["scale"].dtype == "float32"  # written fp32
    assert spec.inputs["scale"].dist == "uniform"
    assert spec.inputs["idx"].dtype == "int64"
    assert spec.inputs["X"].dtype is None and spec.inputs["X"].dist is None  # None: as get_inputs() draws


def test_tolerances_are_read(spec):
    ci = spec.variant("ci")
    assert (ci.rtol, ci.atol) == (0.02, 0.01)
    assert spec.variant("bench-gpu").rtol is None


def test_flop_formula_is_evaluated_with_the_variant_dims(spec):
    assert spec.variant("ci").flops() == 2 * 2 * 8 * 4 * 3 * 3 * 3 * 3
    assert spec.variant("small-fp32").flops() is None


def test_unseen_entries_inherit_the_dims_they_omit(spec):
    base = spec.variant("ci")
    first, second = (entry.merged_over(base) for entry in spec.unseen)
    assert first.dims == {"BATCH": 3, "IN_CH": 3, "OUT_CH": 8, "H": 7, "W": 5}
    assert first.dtype == "bfloat16" and first.flop == base.flop and first.rtol == 0.02
    assert first.flops() == 2 * 3 * 8 * 5 * 3 * 3 * 3 * 3
    assert second.dims["W"] == 9 and second.dims["BATCH"] == 2
    assert second.dtype == "float32", "an unseen entry's own dtype wins over the variant's"
    assert base.dims["BATCH"] == 2, "merging must not change the variant itself"


def test_unseen_entries_merge_over_whichever_variant_runs(spec):
    merged = spec.unseen[0].merged_over(spec.variant("bench-gpu"))
    assert merged.dims["BATCH"] == 3 and merged.dims["IN_CH"] == 64 and merged.dtype == "float16"


def test_precision_is_read_and_defaults_to_keep(spec, tmp_path):
    assert spec.precision == "allow-tf32"
    assert load_spec(write(tmp_path, BASE)).precision == "keep"


@pytest.mark.parametrize("value", ["keep", "allow-tf32", "bf16", "fp16"])
def test_every_documented_precision_is_accepted(tmp_path, value):
    assert load_spec(write(tmp_path, BASE + f"precision: {value}\n")).precision == value


def test_the_bundled_example_specs_all_load():
    examples = sorted((Path(__file__).parents[1] / "examples").glob("*/spec.yaml"))
    assert examples, "examples/*/spec.yaml should exist"
    for path in examples:
        spec = load_spec(path)
        assert input_shapes(spec, spec.variant(None)), path


# ------------------------------------------------------------------ safe arithmetic


def test_safe_eval_does_arithmetic_over_dims_only():
    assert safe_eval("2*M*(N-1)//4 + K**2 - -1", {"M": 4, "N": 5, "K": 3}) == 2 * 4 * 4 // 4 + 9 + 1


@pytest.mark.parametrize(("expr", "fragment"), [
    ("__import__('os').getcwd()", "not plain arithmetic"),
    ("M.bit_length()", "not plain arithmetic"),
    ("[M for M in range(3)]", "not plain arithmetic"),
    ("'abc'", "not plain arithmetic"),
    ("M * UNKNOWN", "unknown dim 'UNKNOWN'"),
    ("9**9**9**9", "exponent"),
    ("M / 0", "cannot be evaluated"),
])
def test_safe_eval_rejects_everything_but_arithmetic(expr, fragment):
    with pytest.raises(ValueError, match=fragment):
        safe_eval(expr, {"M": 4})


# ------------------------------------------------------------------ malformed specs

MALFORMED = {
    "not yaml": ("inputs: {X: [unclosed\n", "not valid YAML"),
    "not a mapping": ("- just\n- a list\n", "must be a mapping"),
    "no inputs": ("ci:\n  - dims: {B: 1}\n", "declares no `inputs`"),
    "no variants": ("inputs:\n  X: {shape: [B]}\n", "declares no variants"),
    "unknown input in params": (BASE.replace("  - dtype: float32\n", "  - params: [X, Y]\n    dtype: float32\n"),
                                "variant 'ci' names unknown input 'Y'"),
    "shape uses unknown dim": (BASE.replace("[BATCH, IN_FEAT]", "[BATCH, HIDDEN]"),
                               "input 'X' uses dim 'HIDDEN'"),
    "init uses unknown dim": (BASE.replace("in_features: IN_FEAT", "in_features: IN_DIM"),
                              "init 'in_features' uses dim 'IN_DIM'"),
    "init list uses unknown dim": (BASE.replace("[OUT_FEAT, 1, 1]", "[OUT_CH, 1, 1]"),
                                   "init 'bias_shape' uses dim 'OUT_CH'"),
    "unknown variant dtype": (BASE.replace("dtype: float32", "dtype: fp99"), "unknown dtype 'fp99'"),
    "unknown input dtype": (BASE.replace("{shape: [BATCH, IN_FEAT]}", "{shape: [BATCH, IN_FEAT], dtype: f32x}"),
                            "unknown dtype 'f32x'"),
    "flop names unknown dim": (BASE.replace("2*BATCH*IN_FEAT*OUT_FEAT", "2*BATCH*IN_FEAT*N"),
                               "unknown dim 'N'"),
    "flop calls a function": (BASE.replace("2*BATCH*IN_FEAT*OUT_FEAT", "__import__('os').getpid()"),
                              "not plain arithmetic"),
    "flop too large a power": (BASE.replace("2*BATCH*IN_FEAT*OUT_FEAT", "BATCH**BATCH**BATCH**BATCH"),
                               "exponent"),
    "unknown variant key": (BASE.replace("    dims:", "    dim: {BATCH: 1}\n    dims:"), "variant 'ci' entry: dim: Extra inputs"),
    "variant entry not a mapping": (BASE + "quick: [8]\n", "variant 'quick' entry must be a mapping"),
    "variant not a list": (BASE + "quick: {dims: {BATCH: 1}}\n", "variant 'quick' must be a non-empty list"),
    "inputs not a mapping": (BASE.replace("  X: {shape: [BATCH, IN_FEAT]}\n", "  - X\n"), "`inputs` must be a mapping"),
    "input spec not a mapping": (BASE.replace("{shape: [BATCH, IN_FEAT]}", "[BATCH, IN_FEAT]"),
                                 "input 'X' must be a mapping"),
    "init not a one-key mapping": (BASE.replace("  - in_features: IN_FEAT\n", "  - IN_FEAT\n"),
                                   "one-key mapping"),
    "dim value not a number": (BASE.replace("BATCH: 8", "BATCH: eight"), "dims.BATCH"),
    "bad precision": (BASE + "precision: tf32\n", "precision"),
    "unseen dim no variant defines": (BASE + "unseen:\n  - dims: {BTACH: 3}\n", "sets dim 'BTACH'"),
    "unseen flop calls a function": (BASE + "unseen:\n  - dims: {BATCH: 3}\n    flop: \"open('x')\"\n",
                                     "`unseen` flop"),
    "unseen unknown input": (BASE + "unseen:\n  - params: [Z]\n    dims: {BATCH: 3}\n", "unknown input 'Z'"),
    "unseen not a list": (BASE + "unseen: {dims: {BATCH: 3}}\n", "`unseen` must be a non-empty list"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_spec_is_one_input_error_naming_the_problem(tmp_path, case):
    text, fragment = MALFORMED[case]
    path = write(tmp_path, text, name="bad_spec.yaml")
    with pytest.raises(InputError) as info:
        load_spec(path)
    assert info.value.exit_code == 2
    assert fragment in str(info.value), str(info.value)
    assert "bad_spec.yaml" in str(info.value), "the message must say which file is wrong"
    assert "SPEC.md" in str(info.value) and "xe-forge spec init" in str(info.value)  # where the format is


def test_missing_spec_file(tmp_path):
    with pytest.raises(InputError, match="spec file not found"):
        load_spec(tmp_path / "absent.yaml")


def test_unknown_variant_name_lists_the_declared_ones(spec):
    with pytest.raises(InputError) as info:
        spec.variant("bench-xpu")
    assert "no variant 'bench-xpu'" in str(info.value)
    assert "ci, bench-gpu, small-fp32" in str(info.value)
    assert info.value.exit_code == 2


def test_a_list_init_valid_in_one_variant_is_checked_in_every_variant(tmp_path):
    text = BASE + "full:\n  - dims: {BATCH: 64, IN_FEAT: 64}\n"
    with pytest.raises(InputError, match="variant 'full' does not define"):
        load_spec(write(tmp_path, text))
