"""Where one batch problem's process runs: the executor seam both backends build on.

`run_job` is one problem process on this machine (`python -m xe_forge.batch.child JOB.json` under the
per-problem time limit, a crash or hang recorded as the problem's status); `LocalExecutor` runs it in
a local slot per GPU, and ray_backend's `RayExecutor` runs it inside a Ray task on a node.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Protocol

from xe_forge.batch.models import ProblemJob, ProblemResult

_LIVE: set[subprocess.Popen] = set()  # problem processes now running, killed if the batch itself is stopped


class Executor(Protocol):
    """Runs one problem's process somewhere and returns what it reported; `slots` problems at a time."""

    slots: list[dict[str, str]]  # one environment per concurrent problem (its GPU made the only visible one)

    def run(self, job: ProblemJob, env: dict[str, str]) -> ProblemResult: ...

    def stop(self) -> None:
        """End every problem process now running (the batch itself is being stopped)."""

    def close(self) -> None: ...


class LocalExecutor:
    """Problem processes on this machine, one slot per GPU (or CPU worker)."""

    def __init__(self, slots: list[dict[str, str]], time_limit: float) -> None:
        self.slots, self.time_limit = slots, time_limit

    def run(self, job: ProblemJob, env: dict[str, str]) -> ProblemResult:
        return run_job(job, Path(job.result_path).with_name(f"{job.run_id}.json"), env, self.time_limit)

    def stop(self) -> None:  # problem processes run in their own sessions, out of Ctrl-C's reach
        for proc in list(_LIVE):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

    def close(self) -> None:
        pass


def run_job(job: ProblemJob, job_path: Path, env: dict[str, str], limit: float) -> ProblemResult:
    """One problem process on this machine, from its job file to its result (a local slot, or a Ray task)."""
    result_path = Path(job.result_path)
    result_path.unlink(missing_ok=True)
    job_path.write_text(job.model_dump_json(indent=2))
    status, reason = _run_child(job_path, env, limit)
    result = finished_result(result_path) if status is None else None
    return result or ProblemResult.failed(job.problem, job.run_id, status or "crashed",
                                          reason or "the problem process wrote no result")


STARTUP_ALLOWANCE = 300.0  # seconds a problem process may take to import its stack, before its own limit starts


def ready_marker(job_path: Path) -> Path:
    """The file a problem process touches once Python, torch, Triton and the pipeline are imported."""
    return job_path.with_suffix(".ready")


def _run_child(job_path: Path, env: dict[str, str], limit: float) -> tuple[str | None, str]:
    """Run one problem process; returns (None, '') when it finished, else (status, reason).

    The limit counts from the process's ready marker: importing torch and Triton takes 5 s on an idle
    machine and over 20 s on a loaded one, and charging that to the problem killed quick ones on CI.
    A process that never gets ready is killed after STARTUP_ALLOWANCE."""
    ready = ready_marker(job_path)
    ready.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "xe_forge.batch.child", str(job_path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    _LIVE.add(proc)
    deadline, started = time.monotonic() + STARTUP_ALLOWANCE, False
    try:
        while True:
            try:  # retrying communicate after its timeout loses no output
                output, _ = proc.communicate(timeout=min(1.0, max(deadline - time.monotonic(), 0.01)))
                break
            except subprocess.TimeoutExpired:
                if not started and ready.exists():
                    deadline, started = time.monotonic() + limit, True
                if time.monotonic() >= deadline:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.communicate()
                    if not started:
                        return "timeout", f"the problem process did not start within {STARTUP_ALLOWANCE:.0f} s"
                    return "timeout", f"exceeded the per-problem time limit of {limit:.0f} s"
    finally:
        _LIVE.discard(proc)
        ready.unlink(missing_ok=True)
    if proc.returncode != 0:
        tail = (output or b"").decode(errors="replace").strip().splitlines()[-3:]
        return "crashed", f"problem process exited with {proc.returncode}: {' | '.join(tail)}"
    return None, ""


def finished_result(path: Path) -> ProblemResult | None:
    """The result a problem process wrote at its very end; None when it did not get there."""
    try:
        return ProblemResult.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None
