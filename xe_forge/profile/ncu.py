"""Nsight Compute (`ncu`) on the candidate's Triton kernels: the command, and what its failures mean.

ncu runs the profiled process (profile/runner.py) with `--profile-from-start off`: the runner opens
the profiler range only around the measured forward calls, after the warm-up compiled every kernel,
and `--kernel-name` keeps only the candidate's own @triton.jit kernels. `--clock-control none`
leaves the GPU clocks as they are (the lent machines must not have their settings changed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from xe_forge.profile import ncu_csv
from xe_forge.profile.tool import Collected, run_tool

MAX_RETRIES = 3  # each retry drops the metrics this ncu says it does not know

# Error texts ncu prints (==ERROR== lines) mapped to the reason a user reads.
_FAILURES = (
    ("ERR_NVGPUCTRPERM", "no permission to read the GPU performance counters (ERR_NVGPUCTRPERM): run as root "
                         "or allow profiling for all users (NVreg_RestrictProfilingToAdminUsers=0)"),
    ("LibraryNotLoaded", "the profiler could not load its counter library in this environment (LibraryNotLoaded); "
                         "sandboxed runtimes such as gVisor do not expose the counters"),
    ("ERR_NVGPUCTRBUSY", "the GPU performance counters are in use by another profiler (ERR_NVGPUCTRBUSY)"),
    ("Device not supported", "ncu does not support this GPU"),
)
_UNKNOWN_METRIC = re.compile(r"(?:Failed to find metric|[Ii]nvalid metric(?: name)?:?)\s+(?:regex:)?\"?([\w.]+)")


def command(ncu: str, metrics: Iterable[str], kernels: Iterable[str], log_file: str, argv: list[str]) -> list[str]:
    names = sorted(set(kernels))
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
           "--profile-from-start", "off", "--log-file", log_file, "--metrics", ",".join(metrics)]
    if names:
        cmd += ["--kernel-name", "regex:^(" + "|".join(re.escape(n) for n in names) + r")($|\()"]
    return cmd + argv


def failure(text: str, returncode: int) -> str | None:
    """Why this ncu output holds no counters, or None when it may (the parser decides then)."""
    for marker, reason in _FAILURES:
        if marker in text:
            return reason
    if "No kernels were profiled" in text:
        return "ncu profiled no kernel: none of the candidate's Triton kernels ran inside the profiled range"
    errors = [line.split("==ERROR==", 1)[1].strip() for line in text.splitlines() if "==ERROR==" in line]
    if errors and returncode != 0:
        return f"ncu failed: {errors[0][:300]}"
    return None


def blocked(text: str) -> bool:
    """Whether the failure is the machine's (permissions, libraries), the same for every kernel."""
    return any(marker in text for marker, _ in _FAILURES)


def unknown_metrics(text: str, metrics: list[str]) -> list[str]:
    """Metrics this ncu version says it cannot collect (dropped and retried rather than given up)."""
    named = set(_UNKNOWN_METRIC.findall(text))
    return [m for m in metrics if m in named]


def collect(ncu: str, argv: list[str], kernels: set[str], *, env: dict[str, str], cwd: str, log_file: str,
            timeout: float, forwards: int) -> Collected:
    """Run ncu over `argv` and read the candidate's kernels from its CSV log."""
    metrics = list(ncu_csv.METRICS)
    notes: list[str] = []
    for _ in range(MAX_RETRIES + 1):
        run = run_tool(command(ncu, metrics, kernels, log_file, argv), env=env, cwd=cwd, timeout=timeout)
        log = Path(log_file).read_text(errors="replace") if Path(log_file).is_file() else ""
        text = "\n".join((log, run.stdout, run.stderr))
        done = Collected(tool=version(text), notes=notes, raw=text)
        if run.missing:
            return done.model_copy(update={"unavailable": f"{ncu} is not installed or not on PATH (Nsight Compute "
                                                          "reads the counters on NVIDIA GPUs)", "blocked": True})
        if run.timed_out:
            return done.model_copy(update={"unavailable": f"ncu did not finish within {timeout:.0f} s; the profiled "
                                                          "process was killed"})
        dropped = unknown_metrics(text, metrics)
        if dropped:
            notes.append(f"this ncu cannot collect {', '.join(dropped)}")
            metrics = [m for m in metrics if m not in dropped]
            continue
        reason = failure(text, run.returncode)
        if reason:
            return done.model_copy(update={"unavailable": reason, "blocked": blocked(text)})
        try:
            records = ncu_csv.parse(log if '"Kernel Name"' in log else run.stdout, kernels, forwards)
        except ncu_csv.NcuCsvError as err:
            return done.model_copy(update={"unavailable": f"ncu printed no counters ({err}; exit code "
                                                          f"{run.returncode})"})
        if not records:
            return done.model_copy(update={"unavailable": "ncu's output names none of the candidate's Triton kernels"})
        return done.model_copy(update={"records": records})
    return Collected(tool="ncu", unavailable="ncu rejected every metric requested", notes=notes)


def version(text: str) -> str:
    match = re.search(r"Version\s+([\d.]+)", text)
    return f"ncu {match.group(1)}" if match else "ncu"
