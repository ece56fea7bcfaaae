"""Running a profiler as a subprocess with a timeout that also ends everything it started."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from pydantic import BaseModel, Field

from xe_forge.profile.models import KernelRecord


class ToolRun(BaseModel):
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    missing: bool = False


class Collected(BaseModel):
    """What a profiler backend read: kernel records, or why it could not."""

    tool: str
    records: list[KernelRecord] = Field(default_factory=list)
    unavailable: str | None = None
    blocked: bool = False  # the machine keeps the counters out (see ProfileRecord.blocked)
    notes: list[str] = Field(default_factory=list)
    raw: str = ""  # the profiler's own output, kept for the record (fixtures, debugging)


def run_tool(argv: list[str], *, env: dict[str, str], cwd: str, timeout: float) -> ToolRun:
    """Run argv in its own session; on timeout the whole process group (the profiler and the profiled
    Python process under it) is killed, so nothing outlives the call."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                                env=env, cwd=cwd, start_new_session=True)
    except (FileNotFoundError, PermissionError):
        return ToolRun(returncode=127, missing=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return ToolRun(returncode=proc.returncode, stdout=out, stderr=err, timed_out=True)
    return ToolRun(returncode=proc.returncode, stdout=out, stderr=err)
