"""Lowered candidates for a problem: lower on the GPU (in its own process, cached), package, verify.

`port`, `batch` (no seed), the fusion stage and the LLM port all come through here, and every
candidate they get goes through the one Evaluator: the lowering never vouches for itself.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel

from xe_forge.errors import EnvError, InputError
from xe_forge.problem.kernel import Problem
from xe_forge.proposers.lower.models import Lowering, Packaged, PackagingError
from xe_forge.proposers.lower.package import package
from xe_forge.verify.models import Verdict

LOWER_VERSION = "1"  # part of the cache key: bump when the lowering settings change
NO_GPU = ("lowering needs a GPU: TorchInductor emits Triton kernels only for a GPU device (CUDA or XPU); "
          "on the CPU it generates C++, so no Triton port can be lowered here")
NO_GPU_HINT = "run it on the GPU machine, or package a lowering recorded there with --lowered RECORD.json"


class PortOutcome(BaseModel):
    """A lowered candidate and the verifier's verdict on it (or why there is none)."""

    passed: bool
    reason: str = ""
    packaged: Packaged | None = None
    verdict: Verdict | None = None
    compile_s: float | None = None


def lowering_dtype(problem: Problem) -> str:
    """The dtype the verifier will run the problem in: the lowering must match it."""
    from xe_forge.verify.compare import run_dtype

    variant = problem.variant_entry()
    return run_dtype(variant.dtype if variant else None, problem.spec.precision if problem.spec else "keep")


def gpu_device(name: str = "auto"):
    """The GPU to lower on; the CPU (or no GPU at all) is an environment error (exit 3)."""
    from xe_forge.targets import get_device

    device = get_device(name)
    if device.kind == "cpu":
        raise EnvError(NO_GPU, hint=NO_GPU_HINT)
    return device


def cache_dir() -> Path:
    root = os.environ.get("XE_FORGE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xe-forge")
    return Path(root) / "lowerings"


def lower_problem(problem: Problem, *, device: str = "auto", timeout: float = 1200.0,
                  use_cache: bool = True) -> Lowering:
    """Lower the problem's reference at its verification dtype and shapes, on the GPU; cached on disk."""
    dev = gpu_device(device)
    from xe_forge.proposers.lower.runner import LowerJob

    dtype = lowering_dtype(problem)
    spec = problem.spec.model_dump(mode="json") if problem.spec else None
    key = hashlib.sha256(json.dumps([LOWER_VERSION, problem.reference.source, spec, problem.variant, dtype,
                                     dev.properties().name, str(dev.toolchain())], default=str).encode()).hexdigest()
    cached = cache_dir() / f"{key[:32]}.json"
    if use_cache and cached.is_file():
        return Lowering.model_validate_json(cached.read_text())
    with tempfile.TemporaryDirectory(prefix="xe-forge-lower-") as tmp:
        out = Path(tmp) / "lowering.json"
        job = LowerJob(reference_path=str(problem.reference.path), spec=spec, variant=problem.variant, dtype=dtype,
                       precision=problem.spec.precision if problem.spec else "keep", device=dev.kind,
                       out_path=str(out))
        (Path(tmp) / "job.json").write_text(job.model_dump_json())
        lowering = _run_job(Path(tmp) / "job.json", out, timeout, problem, dtype)
    if lowering.ok and use_cache:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(lowering.model_dump_json())
    return lowering


def _run_job(job: Path, out: Path, timeout: float, problem: Problem, dtype: str) -> Lowering:
    name = problem.reference.path.name
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


def verify_port(problem: Problem, evaluator, lowering: Lowering, *, allow_torch: set[str], unseen: bool = True,
                time_it: bool | None = None, compile_baseline: bool = False, name: str = "lowered") -> PortOutcome:
    """Package a lowering and put it through the verifier (static checks, trials, unseen shapes, timing)."""
    if not lowering.ok:
        return PortOutcome(passed=False, reason=f"the lowering failed: {lowering.error}", compile_s=lowering.compile_s)
    try:
        packaged = package(lowering, problem.reference.source)
    except PackagingError as err:
        return PortOutcome(passed=False, reason=f"cannot package the lowering: {err}", compile_s=lowering.compile_s)
    verdict = evaluator.evaluate(packaged.source, problem, allow_torch=allow_torch, unseen=unseen, time_it=time_it,
                                 compile_baseline=compile_baseline, name=name)
    reason = "" if verdict.passed else verdict.summary()
    return PortOutcome(passed=verdict.passed, reason=reason, packaged=packaged, verdict=verdict,
                       compile_s=lowering.compile_s)

