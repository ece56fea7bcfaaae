"""The profiled process: import the candidate, build its inputs, warm up, then run the measured calls.

Run as `python -m xe_forge.profile.runner JOB.json` under a profiler (ncu, VTune), in a temporary
directory with the evaluation worker's scrubbed environment. It is the only process that imports
the candidate; the parent reads back only RunnerResult (what ran, and the compiler's resource usage
per kernel), never trusting the candidate for counters: those come from the profiler.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class RunnerJob(BaseModel):
    kernel_path: str
    spec: dict[str, Any] | None = None
    variant: str | None = None
    device: str = "cuda"
    dtype: str = "float32"
    seed: int = 0
    warmup: int = 2
    iters: int = 1
    profiler_range: bool = True
    out_path: str


class CompiledKernel(BaseModel):
    """What Triton's compiler reports for one kernel (largest spill over its compiled variants)."""

    name: str
    n_regs: int | None = None
    n_spills: int | None = None
    shared: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None
    variants: int = 1


class RunnerResult(BaseModel):
    ok: bool = False
    error: str | None = None
    forwards: int = 0
    compiled: list[CompiledKernel] = Field(default_factory=list)


def _jit_function(obj: Any) -> Any:
    """The JITFunction under @triton.autotune / @triton.heuristics wrappers, or None."""
    from triton.runtime.jit import JITFunction

    for _ in range(8):
        if isinstance(obj, JITFunction):
            return obj
        obj = getattr(obj, "fn", None)
        if obj is None:
            return None
    return None


def compiled_kernels(module: Any) -> list[CompiledKernel]:
    out = []
    for obj in vars(module).values():
        fn = _jit_function(obj)
        if fn is None:
            continue
        found = []
        for cache in getattr(fn, "device_caches", {}).values():
            kernels = cache[0] if isinstance(cache, tuple) else {}
            for kernel in getattr(kernels, "values", list)():
                init = getattr(kernel, "_init_handles", None)
                if init is not None:
                    init()
                meta = getattr(kernel, "metadata", None)
                found.append(CompiledKernel(name=fn.__name__, n_regs=getattr(kernel, "n_regs", None),
                                            n_spills=getattr(kernel, "n_spills", None),
                                            shared=getattr(meta, "shared", None), num_warps=getattr(meta, "num_warps", None),
                                            num_stages=getattr(meta, "num_stages", None)))
        if found:
            worst = max(found, key=lambda k: (k.n_spills or 0, k.n_regs or 0))
            out.append(worst.model_copy(update={"variants": len(found)}))
    return out


def _profiler_range(device: str, start: bool) -> None:
    """cudaProfilerStart/Stop: ncu (--profile-from-start off) profiles only inside this range."""
    if device == "cuda":
        import torch

        (torch.cuda.profiler.start if start else torch.cuda.profiler.stop)()


def run(job: RunnerJob) -> RunnerResult:
    from xe_forge.problem.cases import build_case, import_from_path, model_class
    from xe_forge.problem.spec import Spec
    from xe_forge.targets import get_device

    device = get_device(job.device)
    device.prepare_process()
    import torch

    module = import_from_path(job.kernel_path, "candidate")
    spec = Spec(**job.spec) if job.spec else None
    variant = spec.variant(job.variant) if spec else None
    torch_device = device.torch_device()
    case = build_case(module, spec, variant, seed=job.seed, device=torch_device, dtype=job.dtype)
    torch.manual_seed(job.seed)
    model = model_class(module)(*case.init_args)
    tdtype = getattr(torch, job.dtype)
    model.to(device=torch_device, dtype=tdtype) if tdtype.is_floating_point else model.to(torch_device)
    with torch.no_grad():
        for _ in range(job.warmup):
            model(*case.inputs)
        device.synchronize()
        if job.profiler_range:
            _profiler_range(job.device, True)
        for _ in range(job.iters):
            model(*case.inputs)
        device.synchronize()
        if job.profiler_range:
            _profiler_range(job.device, False)
    return RunnerResult(ok=True, forwards=job.iters, compiled=compiled_kernels(module))


def main(path: str) -> int:
    job = RunnerJob.model_validate_json(Path(path).read_text())
    try:
        result = run(job)
    except Exception as exc:  # reported to the parent as data: the profile says why it is missing
        result = RunnerResult(error=f"{type(exc).__name__}: {str(exc).strip()[:400]}")
    Path(job.out_path).write_text(result.model_dump_json())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
