"""Nsight Compute's raw-page CSV (`ncu --csv --page raw`) read into KernelRecords.

The layout (Nsight Compute CLI documentation, "Output Pages"; checked against the 2025.3 output):
one header row naming the launch columns ("ID", "Process ID", "Process Name", "Host Name", "Kernel
Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC") followed by one column per
metric; one units row (empty under the launch columns); then one row per profiled launch. ncu's own
"==PROF==" / "==WARNING==" lines and the application's output may surround it. Numbers can carry
thousands separators ("1,234.5"); a metric the device cannot collect reads "n/a".
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict

from xe_forge.profile.models import KernelRecord

# metric -> KernelRecord field, for the metrics that map one to one
DIRECT = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_throughput_pct",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pipe_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "launch__registers_per_thread": "registers_per_thread",
    "lts__t_sector_hit_rate.pct": "l2_hit_rate_pct",
}
DURATION = "gpu__time_duration.sum"
SUMMED = {  # field -> metrics whose values add up
    "shared_mem_per_block": ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic"),
    "local_memory_bytes": ("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"),
    "dram_bytes": ("dram__bytes_read.sum", "dram__bytes_write.sum"),
}
METRICS: tuple[str, ...] = (DURATION, *dict.fromkeys(DIRECT), *(m for ms in SUMMED.values() for m in ms))

_TIME_TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3,
               "s": 1e6, "second": 1e6}
_BYTES = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
          "kibyte": 1024, "mibyte": 1024**2, "gibyte": 1024**3}
_PERCENT_FIELDS = {"sm_throughput_pct", "dram_throughput_pct", "tensor_pipe_pct", "achieved_occupancy_pct",
                   "l2_hit_rate_pct"}


class NcuCsvError(ValueError):
    """The text holds no raw-page CSV (an error message, an empty log)."""


def number(text: str | None) -> float | None:
    """'1,234.5' -> 1234.5; 'n/a', '' and other non-numbers -> None (absent evidence, not zero)."""
    if text is None:
        return None
    cleaned = text.strip().replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        return None


def _dims(text: str | None) -> list[int] | None:
    nums = [int(n) for n in re.findall(r"\d+", text or "")]
    return nums or None


def _scaled(value: float | None, unit: str, table: dict[str, float]) -> float | None:
    if value is None:
        return None
    return value * table.get(unit.strip().lower(), 1.0)


def read_rows(text: str) -> list[dict[str, tuple[str, str]]]:
    """Each launch as {column: (value, unit)}; raises NcuCsvError when no raw-page header is found."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') and '"Kernel Name"' in line), None)
    if start is None:
        raise NcuCsvError("no Nsight Compute raw-page CSV header in the output")
    rows = list(csv.reader(line for line in lines[start:] if line.startswith('"')))
    header, body = rows[0], rows[1:]
    units = [""] * len(header)
    if body and not body[0][0].strip():
        units, body = body[0], body[1:]
    out = []
    for row in body:
        if len(row) != len(header) or not row[0].strip().isdigit():
            continue  # application output or a truncated line, not a launch
        out.append({name: (value, units[i] if i < len(units) else "") for i, (name, value) in enumerate(zip(header, row, strict=True))})
    return out


def _launch(row: dict[str, tuple[str, str]]) -> KernelRecord:
    fields: dict[str, object] = {"name": row["Kernel Name"][0].strip()}
    if DURATION in row:
        fields["duration_us"] = _scaled(number(row[DURATION][0]), row[DURATION][1] or "ns", _TIME_TO_US)
    for metric, field in DIRECT.items():
        if metric in row and fields.get(field) is None:
            value = number(row[metric][0])
            fields[field] = int(value) if value is not None and field == "registers_per_thread" else value
    for field, metrics in SUMMED.items():
        parts = [_scaled(number(row[m][0]), row[m][1] or "byte", _BYTES) for m in metrics if m in row]
        parts = [p for p in parts if p is not None]
        if parts:
            fields[field] = int(sum(parts)) if field == "shared_mem_per_block" else sum(parts)
    fields["grid"] = _dims(row.get("Grid Size", ("", ""))[0])
    fields["block"] = _dims(row.get("Block Size", ("", ""))[0])
    return KernelRecord(**fields)


def _merge(launches: list[KernelRecord]) -> KernelRecord:
    """Launches of one kernel in one forward: times and bytes add, rates average weighted by time."""
    first = launches[0]
    if len(launches) == 1:
        return first
    weights = [k.duration_us or 1.0 for k in launches]
    merged = first.model_dump()
    merged["launches"] = len(launches)
    for field in ("duration_us", "local_memory_bytes", "dram_bytes"):
        values = [getattr(k, field) for k in launches if getattr(k, field) is not None]
        merged[field] = sum(values) if values else None
    for field in _PERCENT_FIELDS:
        pairs = [(getattr(k, field), w) for k, w in zip(launches, weights, strict=True) if getattr(k, field) is not None]
        merged[field] = sum(v * w for v, w in pairs) / sum(w for _, w in pairs) if pairs else None
    for field in ("registers_per_thread", "shared_mem_per_block"):
        values = [getattr(k, field) for k in launches if getattr(k, field) is not None]
        merged[field] = max(values) if values else None
    return KernelRecord(**merged)


def kernel_matches(launch_name: str, names: set[str]) -> bool:
    """ncu names a Triton kernel by its function name, possibly followed by a parameter list."""
    base = launch_name.split("(")[0].strip()
    return not names or base in names


def parse(text: str, names: set[str] | None = None, forwards: int = 1) -> list[KernelRecord]:
    """Per-kernel records for the launches whose kernel is in `names` (all when empty), per forward."""
    by_name: dict[str, list[KernelRecord]] = defaultdict(list)
    for row in read_rows(text):
        launch = _launch(row)
        if kernel_matches(launch.name, names or set()):
            by_name[launch.name.split("(")[0].strip()].append(launch.model_copy(update={"name": launch.name.split("(")[0].strip()}))
    records = [_merge(launches) for launches in by_name.values()]
    if forwards > 1:
        records = [_per_forward(r, forwards) for r in records]
    return records


def _per_forward(record: KernelRecord, forwards: int) -> KernelRecord:
    scale = {f: getattr(record, f) / forwards for f in ("duration_us", "local_memory_bytes", "dram_bytes")
             if getattr(record, f) is not None}
    return record.model_copy(update={**scale, "launches": max(1, round(record.launches / forwards))})
