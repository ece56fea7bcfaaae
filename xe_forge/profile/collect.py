"""Profile one candidate: a temporary directory, the runner under the device's profiler, one record.

Isolation is the evaluation worker's: the candidate runs only in the profiled process (never here),
that process gets the scrubbed environment (no API keys or tokens), its own temporary directory, and
a timeout that kills it together with the profiler. Every failure becomes `unavailable` with the
reason: a machine that cannot read counters gets "profile unavailable: <why>", never an exception.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import xe_forge
from xe_forge.problem.kernel import Problem
from xe_forge.problem.roofline import PEAKS
from xe_forge.profile import ncu, vtune
from xe_forge.profile.models import KernelRecord, ProfileRecord
from xe_forge.profile.runner import CompiledKernel, RunnerJob, RunnerResult
from xe_forge.verify.sandbox import scrubbed_environ
from xe_forge.verify.static import check_source

TOOLS = {"cuda": "ncu", "xpu": "vtune"}  # device kind -> the vendor profiler that reads its counters
NO_COUNTERS = {"cpu": "the CPU runs Triton's interpreter: hardware counters need a GPU (ncu on NVIDIA, VTune on Intel)"}


def run_dtype(problem: Problem) -> str:
    """The dtype the verifier runs the problem in (precision policy first, then the variant's dtype)."""
    spec = problem.spec
    if spec is not None and spec.precision in ("bf16", "fp16"):
        return {"bf16": "bfloat16", "fp16": "float16"}[spec.precision]
    variant = problem.variant_entry()
    return (variant.dtype if variant and variant.dtype else None) or "float32"


def profile_env(device: str) -> dict[str, str]:
    """The worker's scrubbed environment, plus what the profiled process needs to import xe_forge."""
    env = scrubbed_environ()
    root = str(Path(xe_forge.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    if device == "xpu":
        env["TRITON_XPU_PROFILE"] = "1"  # Intel's Triton backend: needed for kernel-level profiling
    return env


def profile_source(code: str, problem: Problem, *, device: str, target: str, timeout: float = 300.0,
                   tool: str | None = None, workdir: Path | None = None, warmup: int = 2,
                   iters: int = 1, keep_raw: Path | None = None) -> ProfileRecord:
    """The profile of kernel file `code` at the problem's variant; `tool` overrides the profiler path and
    `keep_raw` receives the profiler's own output."""
    record = ProfileRecord(device=device, target=target, variant=problem.variant)
    if device not in TOOLS:
        return record.model_copy(update={"unavailable": NO_COUNTERS.get(device, f"no profiler for device {device}"),
                                         "blocked": True})
    kernels = check_source(code).kernels
    if not kernels:
        return record.model_copy(update={"unavailable": "the file defines no @triton.jit kernel to profile"})
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="xe-forge-profile-", dir=workdir) as tmp:
        job = RunnerJob(kernel_path=str(Path(tmp) / "candidate.py"), spec=_spec(problem), variant=problem.variant,
                        device=device, dtype=run_dtype(problem), warmup=warmup, iters=iters,
                        out_path=str(Path(tmp) / "runner.json"))
        Path(job.kernel_path).write_text(code)
        (Path(tmp) / "job.json").write_text(job.model_dump_json())
        argv = [sys.executable, "-m", "xe_forge.profile.runner", str(Path(tmp) / "job.json")]
        env = profile_env(device)
        if device == "cuda":
            got = ncu.collect(tool or "ncu", argv, kernels, env=env, cwd=tmp, log_file=str(Path(tmp) / "ncu.csv"),
                              timeout=timeout, forwards=iters)
        else:
            got = vtune.collect(tool or "vtune", argv, kernels, env=env, cwd=tmp, result_dir=str(Path(tmp) / "vtune"),
                                timeout=timeout, forwards=warmup + iters,
                                peak_gbps=PEAKS.get(target, PEAKS["any"])[2])
        runner = _runner_result(Path(job.out_path))
    if keep_raw is not None and got.raw:
        keep_raw.write_text(got.raw)
    reason, blocked = got.unavailable, got.blocked
    if runner is not None and runner.error:
        reason, blocked = f"the kernel failed in the profiled process: {runner.error}", False
    if reason:
        return record.model_copy(update={"tool": got.tool, "unavailable": reason, "blocked": blocked,
                                         "notes": got.notes})
    compiled = {c.name: c for c in runner.compiled} if runner else {}
    notes = got.notes + ([f"torch work the problem allows ({', '.join(problem.spec.allow_torch)}) is not profiled: "
                          "times and the roofline cover the Triton kernels only"]
                         if problem.spec is not None and problem.spec.allow_torch else [])
    return record.model_copy(update={"tool": got.tool, "notes": notes,
                                     "kernels": [_with_compiler(r, compiled.get(r.name)) for r in got.records]})


def _spec(problem: Problem) -> dict | None:
    return problem.spec.model_dump(mode="json", exclude={"path"}) if problem.spec else None


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def _runner_result(path: Path) -> RunnerResult | None:
    try:
        return RunnerResult.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


def _with_compiler(record: KernelRecord, compiled: CompiledKernel | None) -> KernelRecord:
    """Spill bytes come from Triton's compiler (the profiler sees only their traffic); registers and
    shared memory fill in where the profiler had none."""
    if compiled is None:
        return record
    return record.model_copy(update={
        "spill_bytes_per_thread": compiled.n_spills,
        "registers_per_thread": record.registers_per_thread if record.registers_per_thread is not None else compiled.n_regs,
        "shared_mem_per_block": record.shared_mem_per_block if record.shared_mem_per_block is not None else compiled.shared,
    })
