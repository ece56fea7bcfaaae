"""A kernel whose forward cannot take the inputs its reference's get_inputs() (or the spec's `inputs:`) makes:
the same one message as a constructor mismatch, exit 2, before any worker starts, naming both forwards and
where the inputs come from; `spec init` writes no spec. Plus the run-time form, read from a verdict, for what
the source cannot tell."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.problem.kernel import load_problem
from xe_forge.problem.signature import verdict_signature_error
from xe_forge.verify.models import Finding, Verdict

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "knowledge_base" / "examples" / "layernorm_rows.py"
FORWARD = "def forward(self, x: torch.Tensor) -> torch.Tensor:"
runner = CliRunner()

REFERENCE = (Path(__file__).parent / "fixtures" / "layernorm_reference.py").read_text()  # the two files' reference


@pytest.fixture
def problem(tmp_path: Path) -> Path:
    """my_norm.py (a kernel whose forward wants (x, residual)) beside its reference my_norm_pytorch.py."""
    kernel = GOOD.read_text().replace(FORWARD, "def forward(self, x: torch.Tensor, residual: torch.Tensor):")
    (tmp_path / "my_norm.py").write_text(kernel.replace("4096, 4096", "6, 40"))
    (tmp_path / "my_norm_pytorch.py").write_text(REFERENCE)
    return tmp_path / "my_norm.py"


@pytest.fixture
def no_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting an evaluator (its worker processes) or spec init's probe fails the test: the message must come
    from the source alone."""
    from xe_forge.spec_init import writer
    from xe_forge.verify.evaluate import Evaluator

    def started(*_args, **_kwargs):
        raise AssertionError("a worker was started")

    monkeypatch.setattr(Evaluator, "__init__", started)
    monkeypatch.setattr(writer, "run_probe", started)


def _says_it(result, *, by: str = "the reference's get_inputs() (my_norm_pytorch.py: [torch.randn(BATCH, HIDDEN)])",
             refuses: str = "the kernel's forward cannot take it (missing a required argument: 'residual')") -> str:
    out = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert out.startswith("error:") and "Traceback" not in out and "a worker was started" not in out, out
    assert "forward mismatch" in out
    assert "Model.forward(x, residual) (my_norm.py)" in out and "Model.forward(x) (my_norm_pytorch.py)" in out, out
    assert by in out and refuses in out, out
    return out


@pytest.mark.parametrize("command", [["check"], ["bench"], ["optimize", "--engine", "rules"]])
def test_check_bench_and_optimize_say_it_before_any_worker(problem: Path, command: list[str], tmp_path: Path,
                                                           no_workers: None):
    extra = ["--run-dir", str(tmp_path / "runs")] if command[0] == "optimize" else []
    out = _says_it(runner.invoke(app, [*command, str(problem), "--device", "cpu", *extra]))
    assert "give the kernel's forward the reference's arguments" in out  # the hint: what to change


def test_spec_init_writes_no_spec(problem: Path, no_workers: None):
    out = _says_it(runner.invoke(app, ["spec", "init", str(problem)]))
    assert out.startswith("error: spec init: forward mismatch") and "no spec was written" in out
    assert sorted(p.name for p in problem.parent.iterdir()) == ["my_norm.py", "my_norm_pytorch.py"]


def test_too_many_inputs_for_the_kernel(tmp_path: Path, no_workers: None):
    (tmp_path / "k.py").write_text(GOOD.read_text())
    two = REFERENCE.replace("def forward(self, x):\n        return self.norm(x)",
                            "def forward(self, x, y):\n        return self.norm(x + y)")
    (tmp_path / "k_pytorch.py").write_text(two.replace("return [torch.randn(BATCH, HIDDEN)]",
                                                       "return [torch.randn(BATCH, HIDDEN), torch.randn(BATCH, HIDDEN)]"))
    out = " ".join(runner.invoke(app, ["check", str(tmp_path / "k.py"), "--device", "cpu"]).output.split())
    assert "forward mismatch: the kernel's Model.forward(x) (k.py) and the reference's Model.forward(x, y)" in out
    assert "called with the 2 inputs of the reference's get_inputs()" in out
    assert "the kernel's forward cannot take them (too many positional arguments)" in out


def test_a_spec_whose_inputs_the_reference_refuses(problem: Path, no_workers: None):
    spec = problem.with_name("s.yaml")
    spec.write_text("inputs:\n  x: {shape: [B, H]}\n  residual: {shape: [B, H]}\ninits:\n  - hidden: H\n"
                    "ci:\n  - dtype: float32\n    dims: {B: 3, H: 8}\n")
    _says_it(runner.invoke(app, ["check", str(problem), "--spec", str(spec), "--device", "cpu"]),
             by="the 2 inputs of the spec's `inputs:` (s.yaml: x, residual)",
             refuses="the reference's forward cannot take them (too many positional arguments)")


def test_a_variant_params_names_the_variant(problem: Path, no_workers: None):
    spec = problem.with_name("s.yaml")
    spec.write_text("inputs:\n  x: {shape: [B, H]}\n  residual: {shape: [B, H]}\ninits:\n  - hidden: H\n"
                    "ci:\n  - dtype: float32\n    params: [x]\n    dims: {B: 3, H: 8}\n")
    _says_it(runner.invoke(app, ["check", str(problem), "--spec", str(spec), "--device", "cpu"]),
             by="the 1 input of the spec's variant 'ci' `params:` (s.yaml: x)")


def test_spec_init_probe_catches_what_the_source_cannot_tell(problem: Path):
    """A kernel file alone whose get_inputs() is not a literal list: the probe (its own process) imports it and
    refuses before writing anything."""
    problem.with_name("my_norm_pytorch.py").unlink()
    kernel = problem.read_text().replace("return [torch.randn(batch_size, hidden)]", "return list(_inputs())")
    problem.write_text(kernel + "\n\ndef _inputs():\n    return (torch.randn(batch_size, hidden),)\n")
    result = runner.invoke(app, ["spec", "init", str(problem)])
    out = " ".join(result.output.split())
    assert result.exit_code == 2 and "forward mismatch" in out, out
    assert "the kernel's get_inputs() (my_norm.py), which the spec's `inputs:` are written from" in out
    assert "Model.forward(x: torch.Tensor, residual: torch.Tensor)" in out and "no spec was written" in out, out
    assert sorted(p.name for p in problem.parent.iterdir()) == ["my_norm.py"]


def _failed(message: str) -> Verdict:
    return Verdict(passed=False, stage_failed="correctness", findings=[Finding(check="runtime", message=message)])


def test_a_run_time_forward_failure_reads_as_the_same_message(problem: Path):
    """What the source cannot tell (get_inputs() built in a loop) a verdict still can: the same message."""
    ref = problem.with_name("my_norm_pytorch.py")
    ref.write_text(ref.read_text().replace("return [torch.randn(BATCH, HIDDEN)]",
                                           "return [torch.randn(BATCH, HIDDEN) for _ in range(1)]"))
    loaded = load_problem(problem)  # nothing to say statically
    err = verdict_signature_error(loaded, _failed("default trial 0: forward raised TypeError: Model.forward() missing "
                                                  "1 required positional argument: 'residual' in a call of a "
                                                  "long-lived model"))
    assert err is not None and err.exit_code == 2
    assert str(err).startswith("forward mismatch: the kernel's Model.forward(x, residual) (my_norm.py) and the "
                               "reference's Model.forward(x) (my_norm_pytorch.py) are both called with the inputs of "
                               "the reference's get_inputs(); the kernel's forward cannot take them (TypeError: "
                               "Model.forward() missing 1 required positional argument: 'residual')"), str(err)


@pytest.mark.parametrize("message", [
    "forward raised TypeError: layernorm_rows() missing 1 required positional argument: 'eps'",  # inside forward
    "the reference Model cannot be built at default: TypeError: Linear.__init__() missing 1 required positional "
    "argument: 'out_features'",  # inside __init__, not the Model's own
    "forward raised ValueError: Model.forward() got bad shapes",
])
def test_errors_inside_the_bodies_stay_what_they_are(problem: Path, message: str):
    ref = problem.with_name("my_norm_pytorch.py")
    ref.write_text(ref.read_text().replace("return [torch.randn(BATCH, HIDDEN)]", "return list(map(torch.randn, []))"))
    assert verdict_signature_error(load_problem(problem), _failed(message)) is None
