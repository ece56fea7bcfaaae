"""Kernel files (xe_forge/kernel.py): reference and spec discovery, static checks with one clear
InputError each, and turning a spec variant or get_inputs() into concrete inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from xe_forge.errors import InputError
from xe_forge.problem.cases import build_case, get_inputs_generators, import_from_path
from xe_forge.problem.kernel import (
    find_spec,
    load_problem,
    read_source,
    resolve_reference,
)
from xe_forge.problem.spec import load_spec

PROBLEMS = Path(__file__).parent / "fixtures_foundation" / "problems"

KERNEL = """\
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return x

def get_inputs():
    return [1.0]  # what forward(x) takes: load_problem checks the count

def get_init_inputs():
    return []
"""


def make(tmp_path: Path, name: str, text: str = KERNEL) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def conv_module():
    return import_from_path(PROBLEMS / "conv_bias.py", "reference")


@pytest.fixture(scope="module")
def conv_spec():
    return load_spec(PROBLEMS / "conv_bias.yaml")


# ------------------------------------------------------------------ reference and spec discovery


def test_explicit_reference_wins_over_the_sibling(tmp_path):
    kernel = make(tmp_path, "k.py")
    make(tmp_path, "k_pytorch.py")
    chosen = make(tmp_path, "elsewhere.py")
    assert resolve_reference(kernel, chosen) == (chosen, False)


def test_sibling_pytorch_file_is_the_default_reference(tmp_path):
    kernel = make(tmp_path, "k.py")
    sibling = make(tmp_path, "k_pytorch.py")
    assert resolve_reference(kernel, None) == (sibling, False)


def test_without_a_reference_the_kernel_is_its_own_and_flagged(tmp_path):
    kernel = make(tmp_path, "k.py")
    make(tmp_path, "other_pytorch.py")  # a reference for another kernel must not be picked up
    assert resolve_reference(kernel, None) == (kernel, True)
    problem = load_problem(kernel)
    assert problem.reference_is_self and problem.reference.path == kernel.resolve()


def test_load_problem_reads_the_sibling_reference(tmp_path):
    kernel = make(tmp_path, "k.py")
    make(tmp_path, "k_pytorch.py", KERNEL.replace("ModelNew", "Model"))
    problem = load_problem(kernel)
    assert not problem.reference_is_self
    assert problem.kernel.model_class == "ModelNew" and problem.reference.model_class == "Model"


def test_a_missing_explicit_reference_is_an_input_error(tmp_path):
    kernel = make(tmp_path, "k.py")
    with pytest.raises(InputError, match="reference file not found"):
        load_problem(kernel, reference=tmp_path / "nope.py")


def test_find_spec_prefers_stem_then_stem_spec_then_spec(tmp_path):
    kernel = make(tmp_path, "k.py")
    assert find_spec(kernel) is None
    names = ["k.yaml", "k_spec.yaml", "spec.yaml"]
    for name in names:
        make(tmp_path, name, "")
    for name in names:
        assert find_spec(kernel) == tmp_path / name
        (tmp_path / name).unlink()


def test_load_problem_discovers_the_spec_and_its_default_variant(tmp_path):
    kernel = tmp_path / "conv_bias.py"
    shutil.copy(PROBLEMS / "conv_bias.py", kernel)
    shutil.copy(PROBLEMS / "conv_bias.yaml", tmp_path / "conv_bias.yaml")
    problem = load_problem(kernel)
    assert problem.spec is not None and problem.variant == "ci"
    assert [e.merged_over(problem.variant_entry()).dims["BATCH"] for e in problem.spec.unseen] == [3, 2]
    bench = load_problem(kernel, variant="bench-gpu")
    assert bench.spec.unseen[0].merged_over(bench.variant_entry()).dims["IN_CH"] == 64
    assert load_problem(kernel, discover_spec=False).spec is None


def test_unknown_variant_is_an_input_error(tmp_path):
    kernel = make(tmp_path, "conv_bias.py", (PROBLEMS / "conv_bias.py").read_text())
    with pytest.raises(InputError, match="no variant 'bench'") as info:
        load_problem(kernel, spec=PROBLEMS / "conv_bias.yaml", variant="bench")
    assert info.value.exit_code == 2


def test_variant_without_a_spec_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="--variant ci needs a spec"):
        load_problem(make(tmp_path, "k.py"), variant="ci")


def test_a_malformed_spec_stops_load_problem(tmp_path):
    kernel = make(tmp_path, "k.py")
    make(tmp_path, "k.yaml", "inputs: {X: {shape: [B]}}\n")
    with pytest.raises(InputError, match="declares no variants"):
        load_problem(kernel)


# ------------------------------------------------------------------ static checks of the source


@pytest.mark.parametrize(("text", "fragment"), [
    ("import torch\n\nclass Model(:\n    pass\n", "syntax error at line 3"),
    ("def get_inputs():\n    return []\n\ndef get_init_inputs():\n    return []\n", "defines no `class Model"),
    (KERNEL.replace("def get_inputs", "def make_inputs"), "defines no `get_inputs()`"),
    (KERNEL.replace("def get_init_inputs", "def init_inputs"), "defines no `get_init_inputs()`"),
    # a Model nested in a function is not the module's Model
    (KERNEL.replace("class ModelNew(nn.Module):", "def build():\n    class Model(nn.Module):\n        pass\n\n"
                                                   "class Other(nn.Module):"), "defines no `class Model"),
])
def test_bad_source_is_one_input_error_naming_the_problem(tmp_path, text, fragment):
    path = make(tmp_path, "bad_kernel.py", text)
    with pytest.raises(InputError) as info:
        read_source(path)
    assert fragment in str(info.value)
    assert "bad_kernel.py" in str(info.value)
    assert info.value.exit_code == 2


def test_missing_file_and_directory_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="kernel file not found"):
        read_source(tmp_path / "absent.py")
    with pytest.raises(InputError, match="reference path is not a file"):
        read_source(tmp_path, role="reference")


def test_undecodable_file_is_an_input_error(tmp_path):
    path = tmp_path / "binary.py"
    path.write_bytes(b"\xff\xfe\x00 not utf-8 \xc3\x28")
    with pytest.raises(InputError, match="cannot read kernel file"):
        read_source(path)


def test_model_and_model_new_are_both_accepted(tmp_path):
    assert read_source(make(tmp_path, "a.py")).model_class == "ModelNew"
    assert read_source(make(tmp_path, "b.py", KERNEL.replace("ModelNew", "Model"))).model_class == "Model"


def test_input_functions_may_be_assigned_or_optional(tmp_path):
    assigned = KERNEL.replace("def get_inputs():\n    return [1.0]", "get_inputs = lambda: [1.0]")
    assert read_source(make(tmp_path, "a.py", assigned)).model_class == "ModelNew"
    bare = "import torch.nn as nn\n\nclass Model(nn.Module):\n    pass\n"
    assert read_source(make(tmp_path, "b.py", bare), require_inputs=False).model_class == "Model"


def test_reading_never_executes_the_file(tmp_path):
    marker = tmp_path / "ran"
    text = f"open({str(marker)!r}, 'w').close()\n" + KERNEL
    read_source(make(tmp_path, "k.py", text))
    assert not marker.exists()


def test_each_import_is_a_fresh_module(tmp_path):
    path = make(tmp_path, "k.py", KERNEL + "state = []\n")
    first, second = import_from_path(path), import_from_path(path)
    first.state.append(1)
    assert first is not second and second.state == []


# ------------------------------------------------------------------ inputs from a spec variant


def test_spec_case_has_the_variant_shapes_dtypes_and_tuple_inits(conv_module, conv_spec):
    case = build_case(conv_module, conv_spec, conv_spec.variant("ci"), seed=0, device="cpu")
    x, scale, idx = case.inputs
    assert x.shape == (2, 3, 6, 5) and x.dtype == torch.bfloat16  # the variant's dtype (bf16)
    assert scale.shape == (8,) and scale.dtype == torch.float32  # the input's own dtype wins
    assert idx.shape == (2,) and idx.dtype == torch.int64
    assert bool(((scale >= 0) & (scale < 1)).all()), "dist: uniform draws from [0, 1)"
    assert case.init_args == [3, 8, 3, (8, 1, 1), 1e-5]
    model = conv_module.Model(*case.init_args)
    assert model.bias.shape == (8, 1, 1), "the tuple init must build the module it describes"


def test_spec_cases_are_deterministic_by_seed(conv_module, conv_spec):
    variant = conv_spec.variant("small-fp32")
    a, b, c = (build_case(conv_module, conv_spec, variant, seed=s, device="cpu") for s in (7, 7, 8))
    assert all(torch.equal(x, y) for x, y in zip(a.inputs, b.inputs, strict=True))
    assert not torch.equal(a.inputs[0], c.inputs[0])


def test_dtype_argument_overrides_the_variant(conv_module, conv_spec):
    case = build_case(conv_module, conv_spec, conv_spec.variant("ci"), seed=0, device="cpu", dtype="float16")
    assert case.inputs[0].dtype == torch.float16
    assert case.inputs[1].dtype == torch.float32 and case.inputs[2].dtype == torch.int64


def test_unseen_variant_builds_its_own_shapes(conv_module, conv_spec):
    unseen = conv_spec.unseen[0].merged_over(conv_spec.variant("ci"))
    case = build_case(conv_module, conv_spec, unseen, seed=0, device="cpu")
    assert case.inputs[0].shape == (3, 3, 7, 5)


# ------------------------------------------------------------------ inputs from get_inputs()


def test_module_case_uses_get_inputs_and_is_deterministic(conv_module):
    a = build_case(conv_module, None, None, seed=3, device="cpu")
    b = build_case(conv_module, None, None, seed=3, device="cpu")
    c = build_case(conv_module, None, None, seed=4, device="cpu")
    assert a.inputs[0].shape == (4, 3, 10, 10)
    assert a.init_args == [3, 8, 3, (8, 1, 1), 1e-5]
    assert torch.equal(a.inputs[0], b.inputs[0]) and not torch.equal(a.inputs[0], c.inputs[0])


def test_module_case_dtype_casts_floating_inputs_only(conv_module):
    case = build_case(conv_module, None, None, seed=0, device="cpu", dtype="bfloat16")
    assert case.inputs[0].dtype == torch.bfloat16 and case.inputs[2].dtype == torch.int64


def test_signed_inputs_keep_shapes_and_dtypes_and_are_signed(conv_module, conv_spec):
    for spec, variant in ((conv_spec, conv_spec.variant("ci")), (None, None)):
        own = build_case(conv_module, spec, variant, seed=5, device="cpu")
        signed = build_case(conv_module, spec, variant, seed=5, device="cpu", dist="signed")
        assert [tuple(x.shape) for x in own.inputs] == [tuple(x.shape) for x in signed.inputs]
        assert [x.dtype for x in own.inputs] == [x.dtype for x in signed.inputs]
        assert bool((signed.inputs[1] < 0).any()), "the uniform [0, 1) input becomes signed"
        if spec is None:
            assert torch.equal(own.inputs[2], signed.inputs[2]), "integer inputs keep get_inputs()'s own draw"


def test_get_inputs_generators_read_the_draw_of_each_input():
    assert get_inputs_generators((PROBLEMS / "conv_bias.py").read_text()) == ["normal", "uniform", None]
