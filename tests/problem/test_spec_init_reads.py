"""What `spec init` and a missing file tell a newcomer, on a kernel that is not in examples/: constructor
arguments named after their parameters, every unseen shape `check` will run listed (one planner), and a
misspelled path answered with the file that is there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from xe_forge.cli.app import app

from .test_constructor_mismatch import GOOD, REFERENCE

runner = CliRunner()


@pytest.fixture
def layernorm(tmp_path: Path) -> Path:
    kernel = tmp_path / "my_layernorm.py"
    kernel.write_text(GOOD.read_text().replace("batch_size, hidden = 4096, 4096", "BATCH, HIDDEN = 64, 384")
                      .replace("torch.randn(batch_size, hidden)", "torch.randn(BATCH, HIDDEN)")
                      .replace("return [hidden]", "return [HIDDEN]"))
    (tmp_path / "my_layernorm_pytorch.py").write_text(REFERENCE.replace("BATCH = 6", "BATCH = 64")
                                                      .replace("HIDDEN = 40", "HIDDEN = 384"))
    return kernel


@pytest.mark.slow
def test_spec_init_names_inits_by_parameter_and_lists_every_unseen_shape_check_runs(layernorm: Path):
    made = runner.invoke(app, ["spec", "init", str(layernorm)])
    assert made.exit_code == 0, made.output
    spec_text = layernorm.with_suffix(".yaml").read_text()
    spec = yaml.safe_load(spec_text)
    assert spec["inits"] == [{"hidden": "HIDDEN"}] and "arg0" not in spec_text  # `hidden`, not `arg0: HIDDEN`
    announced = int(re.search(r"unseen shapes `check` runs: (\d+)", made.output).group(1))
    listed = len(spec.get("unseen", [])) + len(re.findall(r"^#   - dims: ", spec_text, re.M))
    checked = runner.invoke(app, ["check", str(layernorm), "--device", "cpu", "--json"])
    assert checked.exit_code == 0, checked.output
    verdict = json.loads(checked.output)["verdict"]
    ran = sum(1 for r in verdict["correctness"] if r["unseen"])
    assert announced == listed == ran - 1 >= 3, (announced, listed, ran)  # and one drawn in secret
    assert "plus one more drawn in secret" in " ".join(made.output.split())
    assert f"{ran} unseen shapes" in made.output  # spec init's own check says the same count


@pytest.mark.parametrize("option, wrong, right", [
    ("--reference", "my_layernorm_pytorc.py", "my_layernorm_pytorch.py"),
    ("--spec", "my_layernorm.yml", "my_layernorm.yaml"),
])
def test_a_missing_path_gets_did_you_mean(layernorm: Path, option: str, wrong: str, right: str):
    layernorm.with_suffix(".yaml").write_text("inputs: {}\n")
    result = runner.invoke(app, ["check", str(layernorm), option, str(layernorm.with_name(wrong)), "--device", "cpu"])
    out = " ".join(result.output.split())
    assert result.exit_code == 2 and "not found" in out and "Traceback" not in out
    assert f"did you mean {layernorm.with_name(right)}?" in out


def test_a_missing_kernel_gets_did_you_mean(layernorm: Path):
    result = runner.invoke(app, ["check", str(layernorm.with_name("my_layrnorm.py")), "--device", "cpu"])
    assert result.exit_code == 2 and f"did you mean {layernorm}?" in " ".join(result.output.split())


def test_nothing_close_gets_no_guess(layernorm: Path):
    result = runner.invoke(app, ["check", str(layernorm.with_name("zzz.py")), "--device", "cpu"])
    assert result.exit_code == 2 and "did you mean" not in result.output
