"""Ports for a problem: lower on the GPU (its own process, budgeted, cached), package, verify.

`port`, `batch` (no seed), the fusion stage and the LLM port all come through here, and every
candidate they get goes through the one Evaluator: the lowering never vouches for itself. A port is
the general path (general/) with a fast path per lowering that exists; where none can be made (no
GPU, a failed lowering) the port is the general path alone.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from xe_forge.errors import EnvError, InputError
from xe_forge.problem.kernel import Problem
from xe_forge.proposers.lower import cache
from xe_forge.proposers.lower.budget import DEFAULT_BUDGET_S
from xe_forge.proposers.lower.dispatch import Mode
from xe_forge.proposers.lower.fast_shapes import ShapeRequest, main_request
from xe_forge.proposers.lower.models import Lowering, Packaged, PackagingError
from xe_forge.proposers.lower.port import package_port
from xe_forge.verify.models import Verdict

NO_GPU = ("lowering needs a GPU: TorchInductor emits Triton kernels only for a GPU device (CUDA or XPU); "
          "on the CPU it generates C++, so no Triton port can be lowered here")
NO_GPU_HINT = "run it on the GPU machine, or package a lowering recorded there with --lowered RECORD.json"


class PortOutcome(BaseModel):
    """A port and the verifier's verdict on it (or why there is none), and which path served each shape."""

    passed: bool
    reason: str = ""
    packaged: Packaged | None = None
    verdict: Verdict | None = None
    compile_s: float | None = None
    paths: dict[str, str] = Field(default_factory=dict)
    """Each checked shape ('ci', 'unseen 2', ...) -> the path that served it ('fast0', 'general', ...), read
    from the kernels its calls launched: a description for the report, never part of the verdict."""
    notes: list[str] = Field(default_factory=list)


def lowering_dtype(problem: Problem) -> str:
    """The dtype the verifier will run the problem in: the lowering must match it."""
    from xe_forge.verify.compare import run_dtype

    variant = problem.variant_entry()
    return run_dtype(variant.dtype if variant else None, problem.precision_policy())


def gpu_device(name: str = "auto"):
    """The GPU to lower on; the CPU (or no GPU at all) is an environment error (exit 3)."""
    from xe_forge.targets import get_device

    device = get_device(name)
    if device.kind == "cpu":
        raise EnvError(NO_GPU, hint=NO_GPU_HINT)
    return device


def lower_problem(problem: Problem, *, device: str = "auto", timeout: float = 1200.0, use_cache: bool = True,
                  budget_s: float = DEFAULT_BUDGET_S, request: ShapeRequest | None = None) -> Lowering:
    """Lower the problem's reference at one shape request (default: its own), on the GPU; cached on disk."""
    dev = gpu_device(device)
    from xe_forge.proposers.lower.runner import LowerJob

    request = request or main_request(problem)
    dtype = lowering_dtype(problem)
    precision = problem.precision_policy()
    toolchain = {"device": dev.properties().name, "toolchain": str(dev.toolchain())}
    key = cache.cache_key(request.reference_source, cache.shape_signature(request.spec_model(), request.variant),
                          dtype, precision, toolchain)
    if use_cache and (hit := cache.load(key, budget_s)) is not None:
        return hit
    with tempfile.TemporaryDirectory(prefix="xe-forge-lower-") as tmp:
        out = Path(tmp) / "lowering.json"
        job = LowerJob(reference_path=request.reference_path, spec=request.spec, variant=request.variant, dtype=dtype,
                       precision=precision, device=dev.kind, out_path=str(out), budget_s=budget_s)
        (Path(tmp) / "job.json").write_text(job.model_dump_json())
        with dev.lock().shared():  # its autotuning runs kernels: never inside another process's timed section
            lowering = _run_job(Path(tmp) / "job.json", out, timeout, Path(request.reference_path).name, dtype)
    if use_cache:
        cache.store(key, lowering)
    return lowering


def lower_requests(problem: Problem, requests: list[ShapeRequest], **options) -> list[Lowering]:
    """One lowering per request (in order); an environment without a GPU raises EnvError."""
    return [lower_problem(problem, request=r, **options) for r in requests]


def _run_job(job: Path, out: Path, timeout: float, name: str, dtype: str) -> Lowering:
    try:
        proc = subprocess.run([sys.executable, "-m", "xe_forge.proposers.lower.runner", str(job)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Lowering(problem=name, dtype=dtype, error=f"the lowering took longer than {timeout:.0f} s")
    if not out.is_file():
        tail = " | ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-3:])
        return Lowering(problem=name, dtype=dtype, error=f"the lowering process exited with {proc.returncode}: {tail}")
    return Lowering.model_validate_json(out.read_text())


def load_lowering(path: Path, problem: Problem) -> Lowering:
    """A recorded lowering: one JSON record, or the record for this problem and dtype in a (gzipped) JSONL dump."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"lowering record not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as fh:
            text = fh.read()
        if path.name.endswith((".jsonl", ".jsonl.gz")):
            dtype, name = lowering_dtype(problem), problem.reference.path.name
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
            match = [r for r in records if r.get("problem") == name and r.get("dtype") == dtype]
            if not match:
                raise InputError(f"{path} holds no {dtype} lowering of {name}")
            return Lowering(**match[-1])
        return Lowering.model_validate_json(text)
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the lowering record {path}: {str(err)[:300]}") from None


def port_for(problem: Problem, lowerings: list[Lowering], *, mode: Mode = "exact") -> tuple[Packaged | None, str]:
    """The port module: the general path (probed from the reference) with a fast path per usable lowering."""
    from xe_forge.proposers.lower.general.probe import run_probe

    spec = problem.spec.model_dump(mode="json") if problem.spec else None
    probe = run_probe(problem.reference.path, spec, problem.variant)
    usable = [lw for lw in lowerings if lw.ok]
    try:
        packaged = package_port(problem.reference.source, usable, probe, mode=mode)
    except PackagingError as err:
        return None, str(err)
    packaged.notes = [f"lowering not used: {lw.error}" for lw in lowerings if not lw.ok] + packaged.notes
    return packaged, ""


def verify_port(problem: Problem, evaluator, lowering: Lowering | list[Lowering] | None, *, allow_torch: set[str],
                unseen: bool = True, time_it: bool | None = None, compile_baseline: bool = False,
                name: str = "lowered", mode: Mode = "exact") -> PortOutcome:
    """Package a port and put it through the verifier (static checks, trials, unseen shapes, timing)."""
    lowerings = [lowering] if isinstance(lowering, Lowering) else list(lowering or [])
    compile_s = next((lw.compile_s for lw in lowerings if lw.compile_s is not None), None)
    packaged, why = port_for(problem, lowerings, mode=mode)
    if packaged is None:
        failed = "; ".join(f"the lowering failed: {lw.error}" for lw in lowerings if not lw.ok)
        return PortOutcome(passed=False, reason=f"cannot package the port: {why}" + (f" ({failed})" if failed else ""),
                           compile_s=compile_s)
    verdict = evaluator.evaluate(packaged.source, problem, allow_torch=allow_torch, unseen=unseen, time_it=time_it,
                                 compile_baseline=compile_baseline, name=name)
    paths = {r.variant: packaged.path_of(r.kernels) for r in verdict.correctness if r.kernels}
    reason = "" if verdict.passed else verdict.summary()
    return PortOutcome(passed=verdict.passed, reason=reason, packaged=packaged, verdict=verdict, compile_s=compile_s,
                       paths=paths, notes=list(packaged.notes))
