"""Name the limiter of a profiled candidate and place it under the target's roofline.

The order of the tests is the order of what costs most when present: spills (memory traffic the
algorithm never asked for), then whichever unit is busy (memory or math, at or above `busy_pct` of
its peak), then neither busy: latency/occupancy. Thresholds are data (stages/profile/limiters.yaml).
Without counters (`unavailable`) the roofline alone decides when the time and the FLOPs are known.
"""

from __future__ import annotations

from xe_forge.problem.roofline import DTYPE_BYTES, PEAKS, ProblemFacts
from xe_forge.profile.feedback import Thresholds, load_guides
from xe_forge.profile.models import Diagnosis, KernelRecord, ProfileRecord, RooflinePoint


def peaks(target: str, dtype: str) -> tuple[float, float]:
    """(compute TFLOP/s for this dtype, memory GB/s) of the target."""
    peak16, peak32, bandwidth = PEAKS.get(target, PEAKS["any"])
    return (peak16 if DTYPE_BYTES.get(dtype, 4) == 2 else peak32), bandwidth


def roofline_point(facts: ProblemFacts, time_us: float | None, dram_bytes: float | None = None) -> RooflinePoint | None:
    """Where one forward call of `time_us` sits, from the problem's FLOPs and minimal bytes."""
    if not time_us or time_us <= 0:
        return None
    peak_tflops, peak_gbps = peaks(facts.target, facts.dtype)
    seconds = time_us * 1e-6
    tflops = facts.flops / seconds * 1e-12 if facts.flops else None
    gbps = facts.bytes_min / seconds * 1e-9 if facts.bytes_min else None
    ridge = peak_tflops * 1e12 / (peak_gbps * 1e9)
    fraction = None
    if facts.intensity and tflops is not None:
        roof = min(peak_tflops, facts.intensity * peak_gbps * 1e-3)
        fraction = tflops / roof
    elif gbps is not None and not facts.flops:
        fraction = gbps / peak_gbps
    measured = facts.flops / dram_bytes if facts.flops and dram_bytes else None
    return RooflinePoint(flops=facts.flops, bytes_min=facts.bytes_min, intensity=facts.intensity,
                         measured_intensity=measured, time_us=time_us, achieved_tflops=tflops, achieved_gbps=gbps,
                         peak_tflops=peak_tflops, peak_gbps=peak_gbps, ridge=ridge, fraction_of_roof=fraction)


def diagnose(record: ProfileRecord, facts: ProblemFacts, thresholds: Thresholds | None = None) -> Diagnosis:
    """The limiter of the candidate's dominant kernel, with the reasons and the roofline position."""
    t = thresholds or load_guides().thresholds
    kernel = record.dominant if record.available else None
    dram = sum(k.dram_bytes for k in record.kernels if k.dram_bytes) or None
    point = roofline_point(facts, record.duration_us if record.available else None, dram)
    if kernel is None:
        return _from_roofline(point, t, record.unavailable)
    for test in (_spills, _busy_unit, _idle):
        found = test(kernel, t)
        if found is not None:
            limiter, reasons = found
            return Diagnosis(limiter=limiter, kernel=kernel.name, reasons=reasons, roofline=point)
    return _from_roofline(point, t, None).model_copy(update={"kernel": kernel.name})


def _spills(k: KernelRecord, t: Thresholds):
    """Measured local-memory traffic decides when the profiler counted it; else the compiler's spill size."""
    if k.local_memory_bytes is not None and k.dram_bytes:
        share = k.local_memory_bytes / k.dram_bytes
        if share >= t.spill_traffic_share:
            return "spill-bound", [f"{k.name}: local-memory (spill) traffic is {share:.0%} of its DRAM traffic"]
        return None
    if k.spill_bytes_per_thread:
        regs = f" with {k.registers_per_thread} registers/thread" if k.registers_per_thread else ""
        return "spill-bound", [f"{k.name}: the compiler spilled {k.spill_bytes_per_thread} bytes per thread{regs}"]
    return None


def _busy_unit(k: KernelRecord, t: Thresholds):
    memory = k.dram_throughput_pct
    compute = max((v for v in (k.sm_throughput_pct, k.tensor_pipe_pct) if v is not None), default=None)
    if memory is None and compute is None:
        return None
    if max(memory or 0.0, compute or 0.0) < t.busy_pct:
        return None
    shown = f"DRAM {_pct(memory)}, SM {_pct(k.sm_throughput_pct)}, tensor pipe {_pct(k.tensor_pipe_pct)} of peak"
    if (memory or 0.0) >= (compute or 0.0):
        return "memory-bound", [f"{k.name}: device memory is the busy unit ({shown})"]
    return "compute-bound", [f"{k.name}: the math pipes are the busy unit ({shown})"]


def _idle(k: KernelRecord, t: Thresholds):
    if k.dram_throughput_pct is None and k.sm_throughput_pct is None:
        return None
    reasons = [f"{k.name}: neither unit is busy (DRAM {_pct(k.dram_throughput_pct)}, SM {_pct(k.sm_throughput_pct)} "
               f"of peak, under {t.busy_pct:.0f}%)"]
    if k.achieved_occupancy_pct is not None and k.achieved_occupancy_pct < t.low_occupancy_pct:
        reasons.append(f"achieved occupancy {k.achieved_occupancy_pct:.0f}% (few resident warps to hide latency)")
    if k.grid:
        programs = 1
        for d in k.grid:
            programs *= d
        reasons.append(f"grid of {programs} programs, blocks of {'x'.join(map(str, k.block or []))} threads")
    return "latency-bound", reasons


def _from_roofline(point: RooflinePoint | None, t: Thresholds, unavailable: str | None) -> Diagnosis:
    why = [f"no counters: {unavailable}"] if unavailable else []
    if point is None or point.fraction_of_roof is None or point.side is None:
        return Diagnosis(limiter="unknown", reasons=why + ["the roofline needs the problem's FLOPs and a measured time"],
                         roofline=point)
    reach = f"{point.fraction_of_roof:.0%} of the {point.side} roof at {point.intensity:.1f} FLOP/byte"
    if point.fraction_of_roof >= t.roof_fraction:
        limiter = "memory-bound" if point.side == "memory" else "compute-bound"
        return Diagnosis(limiter=limiter, reasons=why + [f"roofline: {reach}"], roofline=point)
    return Diagnosis(limiter="latency-bound", reasons=why + [f"roofline: only {reach}"], roofline=point)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"
