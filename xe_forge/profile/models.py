"""What a profile says about a candidate: per-kernel counters, the limiter, the roofline position.

Every figure is optional: a profiler reads what the hardware and its permissions allow, and a record
with `unavailable` set carries the reason no counters were read (never an exception).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

Limiter = Literal["memory-bound", "compute-bound", "latency-bound", "spill-bound", "unknown"]


class KernelRecord(BaseModel):
    """One of the candidate's Triton kernels, summed over its launches in one forward call."""

    name: str
    launches: int = 1
    duration_us: float | None = Field(None, description="device time per forward, all launches")
    sm_throughput_pct: float | None = Field(None, description="SM (NVIDIA) / XVE array (Intel) busy, % of peak")
    dram_throughput_pct: float | None = Field(None, description="device-memory throughput, % of peak")
    tensor_pipe_pct: float | None = Field(None, description="tensor cores / XMX busy, % of active cycles")
    achieved_occupancy_pct: float | None = None
    registers_per_thread: int | None = None
    spill_bytes_per_thread: int | None = Field(None, description="compiler's local (spill) memory per thread")
    local_memory_bytes: float | None = Field(None, description="measured local-memory traffic, bytes")
    shared_mem_per_block: int | None = Field(None, description="bytes of shared (SLM) memory per block")
    l2_hit_rate_pct: float | None = Field(None, description="L2 (NVIDIA) / L3 (Intel) hit rate")
    dram_bytes: float | None = Field(None, description="bytes read and written to device memory")
    grid: list[int] | None = None
    block: list[int] | None = None


class ProfileRecord(BaseModel):
    """The profile of one candidate on one device: its kernels, or why none could be read."""

    tool: str = "none"
    device: str = ""
    target: str = ""
    variant: str | None = None
    kernels: list[KernelRecord] = Field(default_factory=list)
    unavailable: str | None = None
    blocked: bool = Field(False, description="the machine, not this kernel, kept the counters out "
                                             "(no profiler, no permission): profiling again would only fail again")
    notes: list[str] = Field(default_factory=list)

    @property
    def available(self) -> bool:
        return self.unavailable is None and bool(self.kernels)

    @property
    def dominant(self) -> KernelRecord | None:
        """The kernel that takes the most device time (the first when none was timed)."""
        if not self.kernels:
            return None
        return max(self.kernels, key=lambda k: k.duration_us or 0.0)

    @property
    def duration_us(self) -> float | None:
        times = [k.duration_us for k in self.kernels if k.duration_us is not None]
        return sum(times) if times else None


class RooflinePoint(BaseModel):
    """Where the forward call sits under the target's roofs (FLOPs and bytes from the problem)."""

    flops: float | None
    bytes_min: float | None
    intensity: float | None = Field(None, description="FLOPs per byte, bytes = the inputs read once")
    measured_intensity: float | None = Field(None, description="FLOPs per DRAM byte the profiler counted")
    time_us: float
    achieved_tflops: float | None
    achieved_gbps: float | None
    peak_tflops: float
    peak_gbps: float
    ridge: float = Field(description="intensity where the memory roof meets the compute roof")
    fraction_of_roof: float | None = Field(None, description="attained / the roof at this intensity")

    @property
    def side(self) -> Literal["memory", "compute"] | None:
        if self.intensity is None:
            return None
        return "memory" if self.intensity < self.ridge else "compute"


class Diagnosis(BaseModel):
    """The limiter of a profiled candidate, why, and its roofline position."""

    limiter: Limiter
    kernel: str | None = None
    reasons: list[str] = Field(default_factory=list)
    roofline: RooflinePoint | None = None


class ProfileEntry(BaseModel):
    """One profiled kernel file of a run (`label`: input, before <stage>, output), kept by code hash."""

    label: str
    code_hash: str
    record: ProfileRecord
    diagnosis: Diagnosis
    feedback: str = ""


class SteeringNote(BaseModel):
    """One stage's rules-engine candidate order without and with the limiter."""

    stage: str
    limiter: str
    unsteered: list[str] = Field(default_factory=list)
    steered: list[str] = Field(default_factory=list)

    @computed_field
    @property
    def changed_first(self) -> bool:
        return bool(self.steered) and self.steered[:1] != self.unsteered[:1]


class ProfileSummary(BaseModel):
    """The run report's profile (`--profile` runs): every kernel file profiled, and every steering note."""

    device: str
    target: str
    entries: list[ProfileEntry] = Field(default_factory=list)
    steering: list[SteeringNote] = Field(default_factory=list)
