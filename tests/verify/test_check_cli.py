"""`xe-forge check`: exit 0 when the candidate passes, 1 with the reasons when it fails, and 2 with
one clear message (never a traceback) when the input itself is wrong.

Bad-input files are written to tmp_path, away from the fixtures' spec.yaml, which `check` would
otherwise discover beside the kernel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app

from .helpers import FIXTURES, source

LINEAR = FIXTURES / "linear"
runner = CliRunner()


def check(*args: str | Path):
    return runner.invoke(app, ["check", *map(str, args), "--device", "cpu", "--trials", "1"])


def linear_check(candidate: Path, *extra: str | Path):
    return check(candidate, "--reference", LINEAR / "ref_pytorch.py", "--spec", LINEAR / "spec.yaml", *extra)


def assert_bad_input(result, *words: str) -> None:
    """Exit 2, exactly one `error:` message naming the problem, no traceback."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.output.count("error:") == 1, result.output
    flat = " ".join(result.output.split())
    for word in words:
        assert word in flat, result.output


# ---------------------------------------------------------------- verdicts: exit 0 and 1


def test_passing_kernel_exits_0_with_a_table_that_says_speed_was_not_measured():
    result = linear_check(LINEAR / "good.py")
    assert result.exit_code == 0, result.output
    assert "PASSED" in result.output and "not measured" in result.output
    flat = " ".join(result.output.split())
    assert "unseen 2: shape" in flat and "BATCH=21, IN_FEAT=40," in flat


def test_json_output_parses_and_carries_the_verdict():
    result = linear_check(LINEAR / "good.py", "--json", "--no-unseen")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["verdict"]["passed"] is True and doc["reference_is_self"] is False
    assert doc["verdict"]["speed_measured"] is False


def test_failing_kernel_exits_1_with_the_reason():
    result = linear_check(FIXTURES / "hacks" / "torch_matmul.py")
    assert result.exit_code == 1, result.output
    flat = " ".join(result.output.split())
    assert "FAILED" in flat and "torch-compute" in flat and "torch.matmul" in flat


def test_failing_kernel_json_has_passed_false():
    result = linear_check(FIXTURES / "hacks" / "decoy_kernel.py", "--json")
    assert result.exit_code == 1, result.output
    verdict = json.loads(result.stdout)["verdict"]
    assert verdict["passed"] is False and verdict["stage_failed"] == "static"
    assert verdict["findings"][0]["check"] == "no-launch"


def test_allow_torch_option_admits_the_conv():
    conv = FIXTURES / "conv"
    args = (conv / "good.py", "--reference", conv / "ref_pytorch.py", "--spec", conv / "spec.yaml", "--no-unseen")
    assert check(*args).exit_code == 1  # without the allowance the conv is torch doing the work
    result = check(*args, "--allow-torch", "self.conv")
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------- bad input: exit 2, one message


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_missing_file(tmp_path: Path):
    assert_bad_input(check(tmp_path / "nope.py"), "not found", "nope.py")


def test_syntax_error(tmp_path: Path):
    bad = _write(tmp_path, "kernel.py", source("linear/good.py").replace("def linear_relu(", "def linear_relu(("))
    assert_bad_input(check(bad), "syntax error")


def test_no_model_class(tmp_path: Path):
    bad = _write(tmp_path, "kernel.py", source("linear/good.py").replace("class ModelNew(", "class Thing("))
    assert_bad_input(check(bad), "no `class Model")


def test_no_get_inputs(tmp_path: Path):
    bad = _write(tmp_path, "kernel.py", source("linear/good.py").replace("def get_inputs(", "def make_inputs("))
    assert_bad_input(check(bad), "get_inputs()")


def test_reference_whose_get_inputs_raises(tmp_path: Path):
    # no spec here, so the reference's get_inputs() defines the inputs (and its failure is bad input)
    kernel = _write(tmp_path, "kernel.py", source("linear/good.py"))
    ref = _write(tmp_path, "ref.py", source("linear/ref_pytorch.py").replace(
        "    return [torch.randn(batch_size, in_features)]", "    raise ValueError('no inputs today')"))
    assert_bad_input(check(kernel, "--reference", ref), "no inputs today")


def test_kernel_whose_own_get_inputs_raises_is_fine_when_a_reference_defines_the_inputs(tmp_path: Path):
    kernel = _write(tmp_path, "kernel.py", source("linear/good.py").replace(
        "    return [torch.randn(batch_size, in_features)]", "    raise ValueError('no inputs today')"))
    result = check(kernel, "--reference", LINEAR / "ref_pytorch.py", "--no-unseen")
    assert result.exit_code == 0, result.output


def test_kernel_checked_against_itself_whose_get_inputs_raises(tmp_path: Path):
    # with no reference the kernel is its own reference: its get_inputs defines the inputs
    bad = _write(tmp_path, "kernel.py", source("linear/good.py").replace(
        "    return [torch.randn(batch_size, in_features)]", "    raise ValueError('no inputs today')"))
    assert_bad_input(check(bad), "no inputs today")


def test_reference_that_raises_on_its_own_inputs(tmp_path: Path):
    ref = _write(tmp_path, "ref.py", source("linear/ref_pytorch.py").replace(
        "        return torch.relu(self.linear(x) * 2.0)", "        raise RuntimeError('reference is broken')"))
    assert_bad_input(check(LINEAR / "good.py", "--reference", ref, "--spec", LINEAR / "spec.yaml"),
                     "reference fails on its own inputs", "reference is broken")


SPEC_INPUTS = "inputs:\n  X: {shape: [BATCH, IN_FEAT]}\ninits:\n  - in_features: IN_FEAT\n  - out_features: OUT_FEAT\n"


@pytest.mark.parametrize("spec_text, words", [
    (SPEC_INPUTS + "ci:\n  - {params: [X, Y], dims: {BATCH: 8, IN_FEAT: 32, OUT_FEAT: 16}}\n", ["unknown input 'Y'"]),
    (SPEC_INPUTS + "ci:\n  - {dims: {BATCH: 8, IN_FEAT: 32}}\n", ["uses dim 'OUT_FEAT'"]),
    ("inputs: [unclosed\n", ["not valid YAML"]),
], ids=["unknown-input", "unknown-dim", "bad-yaml"])
def test_bad_spec(spec_text: str, words: list[str], tmp_path: Path):
    spec = _write(tmp_path, "spec.yaml", spec_text)
    assert_bad_input(check(LINEAR / "good.py", "--reference", LINEAR / "ref_pytorch.py", "--spec", spec), *words)


def test_unknown_variant():
    assert_bad_input(linear_check(LINEAR / "good.py", "--variant", "nope"), "no variant 'nope'", "ci")
