"""`xe-forge port`: without a GPU the port is the general path alone; a recorded lowering adds a fast path anywhere."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from recorded import FIXTURES, lowering, reference, spec
from typer.testing import CliRunner

from xe_forge.cli.app import app

runner = CliRunner()
NAME = "12_Gemm_Multiply_LeakyReLU"


def test_without_a_gpu_the_port_is_the_general_path_alone(tmp_path: Path) -> None:
    result = runner.invoke(app, ["port", str(reference(NAME)), "--spec", str(spec(NAME)), "--device", "cpu",
                                 "-o", str(tmp_path / "out.py")])
    text = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert "lowering needs a GPU" in text and "the port is the general path alone" in text
    assert "path: ci -> general" in text and "PORTED" in text
    assert "TorchInductor" not in (tmp_path / "out.py").read_text().split("class Model")[1]


def test_bad_port_options_are_bad_input(tmp_path: Path) -> None:
    for extra in (["--fast-path", "sometimes"], ["--shapes", "BATCH=x"], ["--shapes", "NOPE=3"]):
        result = runner.invoke(app, ["port", str(reference(NAME)), "--spec", str(spec(NAME)), "--device", "cpu",
                                     *extra])
        assert result.exit_code == 2, (extra, result.output)
        assert "Traceback" not in result.output


def test_a_recorded_lowering_is_ported_and_passes_check(tmp_path: Path) -> None:
    out = tmp_path / "port.py"
    result = runner.invoke(app, ["port", str(reference(NAME)), "--spec", str(spec(NAME)), "--device", "cpu",
                                 "--lowered", str(FIXTURES / f"{NAME}.float32.json"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "PORTED" in result.output and out.is_file()
    check = runner.invoke(app, ["check", str(out), "--reference", str(reference(NAME)), "--spec", str(spec(NAME)),
                                "--device", "cpu"])
    assert check.exit_code == 0, check.output
    assert "PASSED" in check.output


def test_a_dump_file_is_searched_for_the_problem_and_dtype(tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl.gz"
    other = lowering(NAME).model_copy(update={"dtype": "bfloat16", "ok": False, "error": "not this one"})
    with gzip.open(dump, "wt") as fh:
        fh.write(other.model_dump_json() + "\n" + lowering(NAME).model_dump_json() + "\n")
    result = runner.invoke(app, ["port", str(reference(NAME)), "--spec", str(spec(NAME)), "--device", "cpu",
                                 "--lowered", str(dump), "-o", str(tmp_path / "p.py"), "--json", "--no-unseen"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["passed"] and data["output"] == str(tmp_path / "p.py")


def test_a_lowering_that_cannot_be_packaged_leaves_the_general_path(tmp_path: Path) -> None:
    record = tmp_path / "old.json"
    record.write_text(lowering(NAME).model_copy(update={"placeholders": None}).model_dump_json())
    result = runner.invoke(app, ["port", str(reference(NAME)), "--spec", str(spec(NAME)), "--device", "cpu",
                                 "--lowered", str(record), "-o", str(tmp_path / "p.py"), "--no-unseen"])
    text = " ".join(result.output.split())  # the console wraps long lines
    assert result.exit_code == 0 and "PORTED" in text
    assert "fast path 0 not packaged" in text and "no graph-input sources" in text


def test_a_missing_record_is_bad_input(tmp_path: Path) -> None:
    result = runner.invoke(app, ["port", str(reference(NAME)), "--device", "cpu", "--lowered",
                                 str(tmp_path / "missing.json")])
    assert result.exit_code == 2 and "not found" in result.output


def test_a_timed_port_names_what_its_ratio_timed_and_the_repeat_command(tmp_path: Path, monkeypatch) -> None:
    """Where a GPU would time the port (here: hand-made figures on the CPU's verdict), the PORTED line names
    both sides, and says the figure is one process's."""
    from xe_forge.verify.evaluate import Evaluator
    from xe_forge.verify.models import Timing

    class Timed(Evaluator):
        measures_speed = True  # type: ignore[assignment]

        def evaluate(self, *args, **kwargs):
            verdict = super().evaluate(*args, **{**kwargs, "time_it": False})
            if verdict.passed:
                verdict.timings = {"eager": Timing(candidate_ms=2.0, baseline_ms=1.0, speedup=0.5, spread=0.01,
                                                   margin=0.02, faster=False, reps=40)}
                verdict.timing, verdict.speed_measured = verdict.timings["eager"], True
            return verdict

    monkeypatch.setattr("xe_forge.verify.evaluate.Evaluator", Timed)
    out = tmp_path / "out.py"
    result = runner.invoke(app, ["port", str(reference(NAME)), "--spec", str(spec(NAME)), "--device", "cpu",
                                 "-o", str(out)])
    text = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert f"PORTED passed (kernel vs eager PyTorch: 0.500x) -> {out}" in text
    assert f"figures from one process; `xe-forge bench --repeat 5 {out}` re-times them" in text
