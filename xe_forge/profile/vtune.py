"""Intel VTune Profiler's command line on the candidate's Triton kernels (Intel GPUs).

Intel's Triton backend documents VTune for kernel-level analysis (intel-xpu-backend-for-triton
README, "Performance Analysis Guide", with TRITON_XPU_PROFILE=1). The collection is the GPU
Compute/Media Hotspots analysis in its characterization mode (Overview preset: XVE array
active/stalled/idle, thread occupancy, memory bandwidth, L3); the report is the hotspots report
grouped by computing task, as tab-separated CSV (column names hold commas):

    vtune -collect gpu-hotspots -knob characterization-mode=overview -result-dir R -- python runner.py
    vtune -report hotspots -result-dir R -group-by computing-task -format csv -csv-delimiter tab

Written from VTune's documentation (command line reference, GPU Compute/Media Hotspots view) and
tested on hand-written samples in that layout: NOT run on Intel hardware yet (README says so).
Percent columns carry a "(%)" suffix in the header; times are in seconds.
"""

from __future__ import annotations

import csv
import io
import re

from xe_forge.profile.models import KernelRecord
from xe_forge.profile.tool import Collected, run_tool

_FAILURES = (
    ("perf_stream_paranoid", "VTune cannot read the GPU counters: set /proc/sys/dev/i915/perf_stream_paranoid "
                             "(or xe observation_paranoid) to 0, or run as root"),
    ("sampling driver", "VTune's sampling driver is not loaded: GPU hardware metrics need it (or root)"),
    ("Cannot collect GPU hardware metrics", "VTune cannot collect GPU hardware metrics on this system"),
)

_COLUMNS = {  # KernelRecord field -> header names VTune uses (first present wins)
    "sm_throughput_pct": ("XVE Array:Active(%)", "XVE Array:Active", "EU Array:Active(%)"),
    "achieved_occupancy_pct": ("XVE Threads Occupancy(%)", "XVE Threads Occupancy", "EU Threads Occupancy(%)"),
    "tensor_pipe_pct": ("XVE Pipelines:XMX(%)", "XVE Pipelines:XMX", "XMX Pipe Active(%)"),
}
_TIME = "Computing Task:Total Time"
_COUNT = "Computing Task:Instance Count"
_READ, _WRITE = "GPU Memory Bandwidth, GB/sec:Read", "GPU Memory Bandwidth, GB/sec:Write"
_L3_MISS = ("GPU L3:Miss Ratio(%)", "GPU L3:Miss Ratio")


def collect_command(vtune: str, result_dir: str, argv: list[str]) -> list[str]:
    return [vtune, "-collect", "gpu-hotspots", "-knob", "characterization-mode=overview", "-result-dir", result_dir,
            "--", *argv]


def report_command(vtune: str, result_dir: str) -> list[str]:
    return [vtune, "-report", "hotspots", "-result-dir", result_dir, "-group-by", "computing-task",
            "-format", "csv", "-csv-delimiter", "tab"]


def failure(text: str, returncode: int) -> str | None:
    for marker, reason in _FAILURES:
        if marker in text:
            return reason
    errors = [line.split("Error:", 1)[1].strip() for line in text.splitlines() if "vtune: Error:" in line]
    if errors and returncode != 0:
        return f"VTune failed: {errors[0][:300]}"
    return None


def _num(text: str | None) -> float | None:
    try:
        return float((text or "").replace(",", "").rstrip("%").strip())
    except ValueError:
        return None


def _first(row: dict[str, str], names: tuple[str, ...]) -> float | None:
    return next((_num(row[n]) for n in names if n in row and _num(row[n]) is not None), None)


def parse(text: str, names: set[str], *, forwards: int, peak_gbps: float) -> list[KernelRecord]:
    """Per-kernel records for the candidate's kernels, per forward call (VTune saw `forwards` calls)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Computing Task")), None)
    if start is None:
        return []
    records = []
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:])), delimiter="\t"):
        name = (row.get("Computing Task") or "").strip()
        base = re.split(r"[\s(\[]", name, maxsplit=1)[0]
        if not base or (names and base not in names):
            continue
        total_s, count = _num(row.get(_TIME)), _num(row.get(_COUNT))
        duration_us = total_s * 1e6 / forwards if total_s is not None else None
        gbps = sum(v for v in (_num(row.get(_READ)), _num(row.get(_WRITE))) if v is not None) or None
        miss = _first(row, _L3_MISS)
        fields = {f: _first(row, cols) for f, cols in _COLUMNS.items()}
        records.append(KernelRecord(
            name=base, launches=max(1, round((count or forwards) / forwards)), duration_us=duration_us,
            dram_throughput_pct=100.0 * gbps / peak_gbps if gbps else None,
            dram_bytes=gbps * 1e9 * duration_us * 1e-6 if gbps and duration_us else None,
            l2_hit_rate_pct=100.0 - miss if miss is not None else None,
            grid=_dims(row.get("Work Size:Global")), block=_dims(row.get("Work Size:Local")), **fields))
    return records


def _dims(text: str | None) -> list[int] | None:
    nums = [int(n) for n in re.findall(r"\d+", (text or "").replace(",", ""))]
    return nums or None


def collect(vtune: str, argv: list[str], kernels: set[str], *, env: dict[str, str], cwd: str, result_dir: str,
            timeout: float, forwards: int, peak_gbps: float) -> Collected:
    """Collect with VTune over `argv`, then read the hotspots report of the candidate's kernels."""
    run = run_tool(collect_command(vtune, result_dir, argv), env=env, cwd=cwd, timeout=timeout)
    done = Collected(tool="vtune", raw=run.stdout + run.stderr)
    if run.missing:
        return done.model_copy(update={"unavailable": f"{vtune} is not installed or not on PATH (Intel VTune "
                                                      "Profiler reads the counters on Intel GPUs)", "blocked": True})
    if run.timed_out:
        return done.model_copy(update={"unavailable": f"VTune did not finish within {timeout:.0f} s; the profiled "
                                                      "process was killed"})
    report = run_tool(report_command(vtune, result_dir), env=env, cwd=cwd, timeout=120)
    done = done.model_copy(update={"raw": "\n".join((done.raw, report.stdout, report.stderr))})
    reason = failure(done.raw, run.returncode or report.returncode)
    if reason:
        return done.model_copy(update={"unavailable": reason,
                                       "blocked": any(marker in done.raw for marker, _ in _FAILURES)})
    records = parse(report.stdout, kernels, forwards=forwards, peak_gbps=peak_gbps)
    if not records:
        return done.model_copy(update={"unavailable": "VTune's report names none of the candidate's Triton kernels"})
    return done.model_copy(update={"records": records})
