"""One batch problem, in its own process: optimize the seed (or port one), then time against eager.

The batch parent starts `python -m xe_forge.batch.child JOB.json` with the GPU it owns made the only
visible one, under a time limit; whatever happens here (crash, hang, bad input) ends this process
only. The result is written as JSON beside the job. It never outlives the process that started it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

from xe_forge.batch.executor import ready_marker
from xe_forge.batch.models import ProblemJob, ProblemResult
from xe_forge.errors import ForgeError
from xe_forge.pipeline.ratios import by_key, ratios_of


def run(job: ProblemJob) -> ProblemResult:
    from xe_forge.config import load_settings
    from xe_forge.pipeline.progress import Progress
    from xe_forge.pipeline.run import optimize
    from xe_forge.problem.kernel import load_problem
    from xe_forge.verify.evaluate import Evaluator, input_allowance

    request = job.run
    settings = load_settings(model=request.model)
    out = ProblemResult(problem_id=job.problem.id, name=job.problem.name, run_id=job.run_id)
    if not request.kernel:  # no seed: TorchInductor's lowering, else the LLM (xe_forge/batch/port.py)
        from xe_forge.batch.port import port_problem

        if request.spec is None:  # no seed, no spec: a --variant cannot apply, the problem's own shapes do
            request = request.model_copy(update={"variant": None})
        ported = port_problem(request, job.run_id, settings, compile_baseline=job.compile and job.port_only)
        if ported.seed is None:
            return ProblemResult.failed(job.problem, job.run_id, ported.status, ported.reason,
                                        exit_code=ported.exit_code)
        request = request.model_copy(update={"kernel": ported.seed})
        out.ported, out.ported_by, out.paths = True, ported.by, ported.paths
        if job.port_only:  # the verified port is the answer: its own verification timed it
            return port_only_result(out, ported)
    resume = job.run_id if (Path(request.run_dir) / job.run_id / "args.json").is_file() else None
    result = optimize(request, settings, resume=resume, run_id=job.run_id, progress=Progress(quiet=True))
    report = result.report
    out.status, out.exit_code, out.device = result.status, result.exit_code, report.device
    out.degenerate, out.correct = report.degenerate_reference, bool(report.final.passed)
    out.not_checked = [s.what for s in report.not_checked]
    out.ratios, out.timings, out.unchanged = list(report.ratios), dict(report.timings), report.unchanged
    if not out.correct or report.device == "cpu":
        return out
    problem = load_problem(Path(result.run_dir) / "output.py", request.reference, request.spec, request.variant,
                           precision=request.precision)
    with Evaluator(request.device, request.target, timeout=request.timeout, trials=1) as ev:
        if ev.measures_speed:
            allow = input_allowance(problem)
            if "eager" not in out.timings:  # the run's own timing against PyTorch failed: once more, eager only
                final = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, time_it=True, full=False,
                                    name="final_vs_eager")
                subject = "input" if out.unchanged else "output"
                out.ratios += ratios_of(final.timings, subject, "batch's re-timing vs eager")
                out.timings = by_key(out.ratios)
            seed_src = Path(request.kernel).read_text()
            first = ev.evaluate(seed_src, problem, allow_torch=allow, time_it=True, full=False,
                                compile_baseline=job.compile, name="seed_vs_eager")
            out.seed_timings = dict(first.timings)
    return out


def port_only_result(out: ProblemResult, ported) -> ProblemResult:
    """A problem stopped at its verified port: correct, timed against eager (and compile) where speed is measured."""
    from xe_forge.pipeline.status import CORRECT_UNTIMED, IMPROVED, NO_IMPROVEMENT

    out.correct, out.device = True, ported.device
    out.ratios = ratios_of(ported.timings, "output", "port's verification")  # the port is the output
    out.timings = by_key(out.ratios)
    eager = ported.timings.get("eager")
    out.status = CORRECT_UNTIMED if eager is None else (IMPROVED if eager.faster else NO_IMPROVEMENT)
    out.exit_code = 0 if out.status != NO_IMPROVEMENT else 1
    out.degenerate, out.not_checked = list(ported.degenerate), list(ported.not_checked)
    return out


def _end_with_parent() -> None:
    """The batch (or the Ray worker) that started this process can die without a word: SIGKILL, a lost
    node. Then this process and its evaluation worker (its process group, when it leads one) end too,
    instead of running on unwatched."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        if os.getpgrp() == os.getpid():
            os.killpg(os.getpid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


def main(path: str) -> int:
    _end_with_parent()
    job = ProblemJob.model_validate_json(Path(path).read_text())
    import xe_forge.pipeline.run  # noqa: F401 - torch, Triton, the pipeline: before the time limit starts
    import xe_forge.verify.evaluate  # noqa: F401

    ready_marker(Path(path)).touch()
    try:
        result = run(job)
    except ForgeError as err:
        result = ProblemResult.failed(job.problem, job.run_id, "failed", str(err), exit_code=err.exit_code)
        result.degenerate = list(getattr(err, "flags", []))  # a reference that cannot be verified says why
    except Exception as exc:
        result = ProblemResult.failed(job.problem, job.run_id, "failed", f"{type(exc).__name__}: {exc}",
                                      traceback=traceback.format_exc()[-3000:])
    Path(job.result_path).write_text(result.model_dump_json(indent=2, exclude_unset=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
