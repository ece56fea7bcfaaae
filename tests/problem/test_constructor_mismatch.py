"""A kernel whose Model takes other constructor arguments than its reference: one message, exit 2, from
every command before any worker starts, naming both signatures and where the arguments come from; `spec init`
writes no spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "knowledge_base" / "examples" / "layernorm_rows.py"
runner = CliRunner()

REFERENCE = (Path(__file__).parent / "fixtures" / "layernorm_reference.py").read_text()  # the two files' reference


@pytest.fixture
def problem(tmp_path: Path) -> Path:
    """my_norm.py (a kernel whose Model wants (hidden, eps, affine)) beside its reference my_norm_pytorch.py."""
    kernel = GOOD.read_text().replace("def __init__(self, hidden: int, eps: float = 1e-5):",
                                      "def __init__(self, hidden, eps, affine):")
    kernel = kernel.replace("return [hidden]", "return [hidden, 1e-5, True]").replace("4096, 4096", "6, 40")
    (tmp_path / "my_norm.py").write_text(kernel)
    (tmp_path / "my_norm_pytorch.py").write_text(REFERENCE)
    return tmp_path / "my_norm.py"


@pytest.fixture
def no_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting an evaluator (its worker processes) or spec init's probe fails the test."""
    from xe_forge.spec_init import writer
    from xe_forge.verify.evaluate import Evaluator

    def started(*_args, **_kwargs):
        raise AssertionError("a worker was started")

    monkeypatch.setattr(Evaluator, "__init__", started)
    monkeypatch.setattr(writer, "run_probe", started)


def _says_it(result, *, ref_refuses: bool = False) -> None:
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "constructor mismatch" in out and "Traceback" not in out and "a worker was started" not in out
    assert "Model(hidden, eps, affine)" in out and "Model(hidden, eps=1e-05)" in out  # both signatures
    if ref_refuses:
        assert "the spec's `inits:`" in out and "the reference's Model cannot take them" in out
    else:
        assert "the reference's get_init_inputs() (my_norm_pytorch.py: [HIDDEN])" in out  # where the args come from
        assert "the kernel's Model cannot take it (missing a required argument: 'eps')" in out


@pytest.mark.parametrize("command", [["check"], ["bench"], ["optimize", "--engine", "rules"]])
def test_check_bench_and_optimize_say_the_same(problem: Path, command: list[str], tmp_path: Path,
                                               no_workers: None):
    result = runner.invoke(app, [*command, str(problem), "--device", "cpu"]
                           + (["--run-dir", str(tmp_path / "runs")] if command[0] == "optimize" else []))
    _says_it(result)


def test_spec_init_writes_no_spec(problem: Path, no_workers: None):
    result = runner.invoke(app, ["spec", "init", str(problem)])
    _says_it(result)
    assert "no spec was written" in result.output and not problem.with_suffix(".yaml").exists()


def test_a_spec_whose_inits_the_reference_refuses(problem: Path, no_workers: None):
    spec = problem.with_name("s.yaml")
    spec.write_text("inputs:\n  x: {shape: [B, H]}\ninits:\n  - hidden: H\n  - eps: 1.0e-05\n  - affine: true\n"
                    "ci:\n  - dtype: float32\n    dims: {B: 3, H: 8}\n")
    _says_it(runner.invoke(app, ["check", str(problem), "--spec", str(spec), "--device", "cpu"]), ref_refuses=True)


def test_port_reads_its_problem_the_same_way(tmp_path: Path):
    bad = tmp_path / "p.py"
    bad.write_text(REFERENCE.replace("return [HIDDEN]", "return [HIDDEN, 1e-5, 3]"))
    result = runner.invoke(app, ["port", str(bad), "--device", "cpu"])
    out = " ".join(result.output.split())
    assert result.exit_code == 2 and "constructor mismatch" in out and "Model(hidden, eps=1e-05)" in out, out
    assert "too many positional arguments" in out


def test_a_mismatch_only_a_run_can_see_gets_the_same_message(problem: Path):
    """get_init_inputs() that is not a literal list: the source cannot tell, the verdict can."""
    text = problem.read_text().replace("return [hidden, 1e-5, True]", "return list(ARGS)")
    problem.write_text(text + "\nARGS = (40, 1e-5, True)\n")
    ref = problem.with_name("my_norm_pytorch.py")
    ref.write_text(ref.read_text().replace("return [HIDDEN]", "return list((HIDDEN,))"))
    result = runner.invoke(app, ["check", str(problem), "--device", "cpu", "--no-unseen", "--trials", "1"])
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "constructor mismatch" in out and "Model(hidden, eps, affine)" in out and "Model(hidden, eps=1e-05)" in out
    assert "missing 2 required positional arguments" in out and "get_init_inputs()" in out
