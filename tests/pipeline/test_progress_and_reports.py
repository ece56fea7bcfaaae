"""The run's console and its reports: the live status (terminal only, never under --json), "best so
far" never a number that was not measured, the final timing against PyTorch on a GPU, skipped checks
in the headline, and a report for a run that failed."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.config import RunRequest, Settings
from xe_forge.errors import InputError
from xe_forge.pipeline.cover import StageOutcome
from xe_forge.pipeline.nodes import final_verify_node
from xe_forge.pipeline.progress import LiveStatus, Progress
from xe_forge.pipeline.run import optimize
from xe_forge.pipeline.status import headline, skipped_checks
from xe_forge.problem.kernel import load_problem
from xe_forge.verify.models import CorrectnessReport, Timing, TrialResult, Verdict

from .helpers import KERNEL

TIMING = Timing(candidate_ms=1.0, baseline_ms=1.5, speedup=1.5, spread=0.01, margin=0.02, faster=True, reps=20)


def _console(terminal: bool) -> Console:
    return Console(file=io.StringIO(), force_terminal=terminal, width=120, color_system=None)


@pytest.mark.parametrize(("terminal", "quiet", "drawn"), [(True, False, True), (False, False, False),
                                                          (True, True, False)])
def test_live_status_only_on_a_terminal_and_never_quiet(terminal, quiet, drawn):
    console = _console(terminal)
    status = LiveStatus(console, enabled=not quiet)
    status.phase("verifying ci: 3 trials", limit=120)
    assert status.showing is drawn
    time.sleep(0.6)
    status.stop()
    text = console.file.getvalue()
    assert ("verifying ci" in text) is drawn and ("of 120 s (--timeout)" in text) is drawn


def test_the_status_names_the_phase_its_clock_and_the_limit():
    status = LiveStatus(_console(True))
    status.phase("stage 2/4 dtype: candidate 3", limit=60)
    status._since -= 42  # as if 42 s had passed
    assert status.render().plain.startswith("42 s of 60 s (--timeout)  stage 2/4 dtype: candidate 3")
    status.stop()


def _outcome(improved: bool, verified: bool, speedup: float | None) -> StageOutcome:
    return StageOutcome(stage="dtype", code="", improved=improved, speed_verified=verified, speedup=speedup)


def test_best_so_far_is_never_an_unmeasured_number():
    progress = Progress(_console(False))
    progress.stage_done(_outcome(False, False, None))
    assert "best so far: no improvement yet" in progress.console.file.getvalue()
    progress.stage_done(_outcome(True, False, None))  # CPU: accepted, not timed
    text = progress.console.file.getvalue()
    assert "best so far: verified correct, speed not measured" in text and "1.000x" not in text
    gpu = Progress(_console(False))
    gpu.stage_done(_outcome(True, True, 1.25))
    gpu.stage_done(_outcome(True, True, 1.2))
    assert "best so far: output 1.500x vs the input kernel" in gpu.console.file.getvalue()


def test_no_issue_is_said_in_words_not_as_an_empty_list():
    progress = Progress(_console(False))
    progress.issues([])
    assert progress.console.file.getvalue().splitlines() == ["  no issue found"]


# ---------------------------------------------------------------- what was not checked


def _verdict(unseen: int, ghost: bool | None = True) -> Verdict:
    trial = TrialResult(label="trial 0", passed=True)
    reports = [CorrectnessReport(variant="ci", dtype="float32", rtol=1e-4, atol=1e-4, trials=[trial],
                                 ghost_changed=ghost)]
    reports += [CorrectnessReport(variant=f"unseen[{i}]", dtype="float32", rtol=1e-4, atol=1e-4, trials=[trial])
                for i in range(unseen)]
    return Verdict(passed=True, correctness=reports, speed_note="speed not measured: the CPU runs Triton's "
                   "interpreter (correctness only)")


def test_no_unseen_shape_is_a_skipped_check_in_the_headline(tmp_path):
    problem = load_problem(KERNEL, discover_spec=False)
    skipped = skipped_checks(_verdict(0), problem, speed_requested=True)
    assert [s.check for s in skipped] == ["unseen", "speed"]
    assert headline("improved", skipped) == "improved, unseen shapes not checked, speed not measured"
    assert headline("verified correct, speed not measured", skipped) == (  # said once
        "verified correct, speed not measured, unseen shapes not checked")
    assert "no spec" in skipped[0].reason and "spec init" in skipped[0].reason
    assert skipped_checks(_verdict(2), problem) == []
    assert [s.check for s in skipped_checks(_verdict(2, ghost=None), problem)] == ["ghost"]
    assert "--no-unseen" in skipped_checks(_verdict(0), problem, unseen_requested=False)[0].reason


def test_check_prints_what_it_did_not_check(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text(KERNEL.read_text())
    (tmp_path / "k_pytorch.py").write_text((KERNEL.parent / "kernel_pytorch.py").read_text())
    result = CliRunner().invoke(app, ["check", str(kernel), "--device", "cpu", "--trials", "1", "--no-unseen"])
    assert result.exit_code == 0, result.output
    assert "PASSED" in result.output and "PASSED passed" not in result.output
    assert "not checked: unseen shapes not checked: skipped on request (--no-unseen)" in result.output


# ---------------------------------------------------------------- the final timing against PyTorch


class _GpuEvaluator:
    """Stands in for the Evaluator on a GPU: records the calls, answers with a timing for every side asked."""

    measures_speed = True

    def __init__(self, compile_fails: bool = False) -> None:
        self.calls: list[dict] = []
        self.compile_fails = compile_fails

    def evaluate(self, code, problem, **kw) -> Verdict:
        self.calls.append(kw)
        sides = (["input kernel"] if kw.get("baseline_source") else []) + [v.label for v in kw.get("versus", ())]
        notes = []
        if self.compile_fails and "torch.compile" in sides:
            sides.remove("torch.compile")
            notes.append("torch.compile could not be timed: dynamo failed")
        timings = {k: TIMING for k in sides}
        return Verdict(passed=True, timing=next(iter(timings.values()), None), timings=timings, notes=notes,
                       speed_measured=bool(timings))


def _final(evaluator, reference_is_self: bool = False):
    problem = SimpleNamespace(reference_is_self=reference_is_self)
    ctx = SimpleNamespace(evaluator=evaluator, problem=problem, allowance=set(), progress=Progress(quiet=True),
                          store=SimpleNamespace(candidates=lambda run_id: []), run_id="r")
    state = SimpleNamespace(code="new", input_code="old")
    return final_verify_node(state, SimpleNamespace(context=ctx))["final"]


def test_on_a_gpu_one_timing_run_times_the_output_against_the_input_eager_and_torch_compile():
    ev = _GpuEvaluator()
    final = _final(ev)
    assert set(final.versus) == {"eager", "torch.compile"} and not final.versus_note
    assert list(final.verdict.timings) == ["input kernel"]
    (timed,) = ev.calls  # the unseen shapes and every ratio: one evaluation
    assert timed["time_it"] and timed["unseen"] and timed["baseline_source"] == "old"
    assert [v.label for v in timed["versus"]] == ["eager", "torch.compile"]


def test_when_torch_compile_fails_eager_is_still_timed_and_the_report_says_why():
    final = _final(_GpuEvaluator(compile_fails=True))
    assert set(final.versus) == {"eager"} and "torch.compile could not be timed" in final.versus_note


def test_no_pytorch_timing_without_a_reference():
    ev = _GpuEvaluator()
    final = _final(ev, reference_is_self=True)
    assert final.versus == {} and len(ev.calls) == 1


# ---------------------------------------------------------------- a run that fails still reports


def test_a_failed_run_writes_a_report_saying_why(tmp_path):
    kernel = tmp_path / "kernel.py"
    kernel.write_text(KERNEL.read_text().replace("tl.maximum(y, 0.0)", "tl.minimum(y, 0.0)"))  # wrong everywhere
    (tmp_path / "kernel_pytorch.py").write_text((KERNEL.parent / "kernel_pytorch.py").read_text())
    request = RunRequest(kernel=str(kernel), device="cpu", engine="rules", run_dir=tmp_path / "runs")
    with pytest.raises(InputError) as info:
        optimize(request, Settings(_env_file=None), progress=Progress(quiet=True))
    run_dir = next((tmp_path / "runs").iterdir())
    report = json.loads((run_dir / "report.json").read_text())
    assert report["status"] == "failed" and "fails against its reference" in report["error"]
    assert "failed" in (run_dir / "report.md").read_text() and (run_dir / "report.html").is_file()
    assert str(run_dir / "report.md") in str(info.value)  # the error says where the report is


def test_non_terminal_output_is_never_wrapped_at_80_columns(tmp_path):
    deep = tmp_path / ("a_rather_long_directory_name_" * 4) / "kernel.py"
    result = CliRunner().invoke(app, ["check", str(deep), "--device", "cpu"])
    assert result.exit_code == 2 and f"kernel file not found: {deep}" in result.output  # one unbroken line
    assert Path(KERNEL).is_file()


def test_the_caching_hint_only_where_fresh_inputs_passed(tmp_path):
    """"output cached on input identity?" explains a kernel right on fresh inputs and wrong on reused storage;
    on a kernel wrong everywhere it would mislead."""
    from tests.verify.helpers import FIXTURES

    linear = FIXTURES / "linear"
    args = ["--reference", str(linear / "ref_pytorch.py"), "--spec", str(linear / "spec.yaml"), "--device", "cpu",
            "--no-unseen"]
    caching = CliRunner().invoke(app, ["check", str(FIXTURES / "hacks" / "pointer_cache.py"), *args])
    assert caching.exit_code == 1 and "cached on input identity" in caching.output
    wrong = tmp_path / "wrong.py"
    wrong.write_text((linear / "good.py").read_text().replace("acc += tl.dot(", "acc -= tl.dot("))
    result = CliRunner().invoke(app, ["check", str(wrong), *args])
    assert result.exit_code == 1 and "FAILED" in result.output, result.output
    assert "cached on input identity" not in result.output


def test_a_check_killed_at_the_timeout_says_how_to_raise_it():
    from tests.verify.helpers import FIXTURES

    linear = FIXTURES / "linear"
    result = CliRunner().invoke(app, ["check", str(FIXTURES / "hacks" / "hang.py"), "--reference",
                                      str(linear / "ref_pytorch.py"), "--spec", str(linear / "spec.yaml"),
                                      "--device", "cpu", "--timeout", "5", "--no-unseen"])
    flat = " ".join(result.output.split())
    assert result.exit_code == 1 and "timed out after 5 s" in flat, result.output
    assert "killed at the 5 s timeout; --timeout SECONDS or XE_FORGE_TIMEOUT raises it" in flat
