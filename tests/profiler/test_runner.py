"""The profiled process's side: build the problem's inputs, warm up, run the measured calls, and
report a failure as data (the parent turns it into the profile's reason)."""

from __future__ import annotations

from xe_forge.profile.collect import run_dtype
from xe_forge.profile.runner import RunnerJob, RunnerResult, main, run

from .conftest import EXAMPLE


def _job(tmp_path, problem, **kw) -> RunnerJob:
    return RunnerJob(kernel_path=kw.pop("kernel_path", str(EXAMPLE / "kernel.py")),
                     spec=problem.spec.model_dump(mode="json", exclude={"path"}), variant="ci", device="cpu",
                     dtype="float32", warmup=1, iters=2, out_path=str(tmp_path / "runner.json"), **kw)


def test_runs_the_measured_forwards_at_the_spec_variant(gemm_problem, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # restored after the test (the CPU device sets it)
    result = run(_job(tmp_path, gemm_problem))
    assert result.ok and result.error is None and result.forwards == 2
    assert result.compiled == []  # the interpreter compiles nothing; on a GPU: regs and spills per kernel


def test_a_failing_kernel_is_reported_not_raised(gemm_problem, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    broken = tmp_path / "broken.py"
    broken.write_text((EXAMPLE / "kernel.py").read_text().replace("x = x.contiguous()", "raise RuntimeError('boom')"))
    job = _job(tmp_path, gemm_problem, kernel_path=str(broken))
    (tmp_path / "job.json").write_text(job.model_dump_json())
    assert main(str(tmp_path / "job.json")) == 1
    result = RunnerResult.model_validate_json((tmp_path / "runner.json").read_text())
    assert not result.ok and result.error == "RuntimeError: boom"


def test_run_dtype_follows_the_precision_policy_then_the_variant(gemm_problem):
    assert run_dtype(gemm_problem) == "bfloat16"  # bench-gpu declares bfloat16
    ci = gemm_problem.model_copy(update={"variant": "ci"})
    assert run_dtype(ci) == "float32"
    forced = ci.model_copy(update={"spec": ci.spec.model_copy(update={"precision": "fp16"})})
    assert run_dtype(forced) == "float16"
