"""The evaluation worker: a spawned process that imports candidates, checks and times them.

It is kept warm across candidates (torch and triton imported once) and replaced by the parent when
a candidate crashes it, hangs past the timeout, or faults the GPU. Results go back as plain dicts
of the verifier's pydantic records.
"""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
import traceback
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from xe_forge.problem.spec import Spec


class Job(BaseModel):
    """One request to the worker."""

    op: Literal["check", "ping"] = "check"
    candidate_path: str
    reference_path: str
    baseline_path: str | None = None
    spec: dict[str, Any] | None = None
    variant: str | None = None
    precision: str = "keep"
    trials: int = 3
    seed: int = 0
    unseen: bool = False
    full: bool = True
    audit_torch: bool = False  # the input delegates nothing to torch: no heavy torch op may run
    time: bool = False
    compile_baseline: bool = False


def child_main(conn: Any, device_kind: str, target: str) -> None:
    """Entry point of the spawned process: prepare the device once, then serve jobs until told to stop."""
    from xe_forge.targets import get_device

    device = get_device(device_kind, target)
    device.prepare_process()
    import xe_forge.verify.correctness  # noqa: F401  (loaded before any candidate, so PatchGuard watches it)
    import xe_forge.verify.timing  # noqa: F401
    from xe_forge.verify.hooks import PatchGuard

    os.chdir(tempfile.mkdtemp(prefix="xe-forge-worker-"))
    while True:
        try:
            raw = conn.recv()
        except EOFError:
            return
        if raw is None:
            return
        job = Job(**raw)
        guard = PatchGuard()
        try:
            result = {"pong": True} if job.op == "ping" else handle(job, device, guard)
        except BaseException as exc:  # the worker must answer, whatever the candidate did
            result = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
        patched = guard.changed()
        if patched and not result.get("restart"):  # results measured under a patch are void
            result = _patched_result(patched, "correctness")
        conn.send(result)
        if patched:
            return


def _patched_result(names: list[str], stage: str) -> dict[str, Any]:
    from xe_forge.verify.models import Finding

    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return {"findings": [Finding(check="monkey-patch", message=f"the candidate rebound {shown} in the worker: "
                                 "patching torch, the reference or the verifier is not allowed").model_dump()],
            "stage_failed": stage, "restart": True}


def handle(job: Job, device: Any, guard: Any = None) -> dict[str, Any]:
    from xe_forge.problem.cases import import_from_path, unseen_batch_sizes
    from xe_forge.verify.correctness import BadInput, check_variant, describe, error_line
    from xe_forge.verify.models import Finding

    spec = Spec(**job.spec) if job.spec else None
    variant = spec.variant(job.variant) if spec else None
    label = spec.variant_name(job.variant) if spec else "default"
    try:
        ref_mod = import_from_path(job.reference_path, "reference")
    except Exception as exc:
        return {"bad_input": True, "findings": [Finding(check="input", message=f"the reference does not import: "
                                                         f"{describe(exc)}").model_dump()]}
    if guard is not None:
        guard.watch_module(ref_mod)
    cand_path = Path(job.candidate_path)
    try:
        cand_mod = import_from_path(cand_path, "candidate")
    except Exception as exc:
        return {"findings": [Finding(check="import", line=error_line(exc, cand_path),
                                     message=f"the candidate does not import: {describe(exc)}").model_dump()],
                "stage_failed": "import"}
    patched = guard.changed() if guard is not None else []
    if patched:  # patched at import time: run nothing under it
        return _patched_result(patched, "import")
    _set_tf32(job.precision)
    torch_device = device.torch_device()
    common = dict(device=torch_device, precision=job.precision, seed=job.seed)
    reports = []
    try:
        main = check_variant(ref_mod, cand_mod, cand_path, spec, variant, label=label, trials=job.trials,
                             full=job.full, audit_torch=job.audit_torch, **common)
        reports.append(main)
        if main.passed and job.unseen:
            for name, entry, batch in _unseen(spec, variant, ref_mod, unseen_batch_sizes):
                reports.append(check_variant(ref_mod, cand_mod, cand_path, spec, entry, label=name, trials=1,
                                             full=False, batch_size=batch, **common))
    except BadInput as exc:
        return {"bad_input": True, "findings": [Finding(check="input", message=str(exc)).model_dump()],
                "correctness": [r.model_dump() for r in reports]}
    result: dict[str, Any] = {"correctness": [r.model_dump() for r in reports]}
    if all(r.passed for r in reports) and job.time and device.measures_speed:
        result["timing"] = _time(job, device, ref_mod, cand_mod, spec, variant, guard)
    return result


def _set_tf32(precision: str) -> None:
    """fp32 under `keep` means IEEE fp32 for the reference too: cuDNN convolutions default to TF32."""
    import torch

    allow = precision == "allow-tf32"
    torch.backends.cuda.matmul.allow_tf32 = allow
    torch.backends.cudnn.allow_tf32 = allow


def _unseen(spec, variant, ref_mod, unseen_batch_sizes):
    if spec is not None and variant is not None:
        for i, entry in enumerate(spec.unseen):
            merged = entry.merged_over(variant)
            dims = ", ".join(f"{k}={v}" for k, v in entry.dims.items())
            yield f"unseen[{i}] {dims}", merged, None
        return
    batch = getattr(ref_mod, "batch_size", None)
    if isinstance(batch, int):
        for b in unseen_batch_sizes(batch):
            yield f"unseen batch_size={b}", None, b


def _time(job: Job, device: Any, ref_mod, cand_mod, spec, variant, guard: Any = None) -> dict[str, Any]:
    """Candidate against its baseline (the stage's input kernel, or eager PyTorch), interleaved."""
    import torch

    from xe_forge.problem.cases import build_case, import_from_path
    from xe_forge.verify.correctness import ModelPair, run_dtype
    from xe_forge.verify.timing import interleaved

    dtype = run_dtype(variant, job.precision)
    tdev = device.torch_device()
    init = build_case(ref_mod, spec, variant, seed=job.seed, device="cpu", dtype=dtype).init_args
    pair = ModelPair(ref_mod, cand_mod, init, tdev, dtype, job.seed)
    if job.baseline_path:
        base_mod = import_from_path(job.baseline_path, "baseline")
        baseline = ModelPair(ref_mod, base_mod, init, tdev, dtype, job.seed).cand
        base_name = "input kernel"
    else:
        baseline = copy.deepcopy(pair.ref).to(getattr(torch, dtype))
        base_name = "eager"
    sets = [build_case(ref_mod, spec, variant, seed=job.seed + 31 * i, device=tdev, dtype=dtype).inputs
            for i in range(3)]

    def call(model):
        def run(inputs):
            with torch.no_grad():
                return model(*inputs)
        return run

    out = {base_name: interleaved(device, call(pair.cand), call(baseline), sets).model_dump()}
    if job.compile_baseline:
        # importing dynamo and the first (compiling) call patch torch: the harness's doing, not the candidate's
        with guard.harness_changes() if guard is not None else contextlib.nullcontext():
            compiled = torch.compile(copy.deepcopy(pair.ref).to(getattr(torch, dtype)))
            call(compiled)(sets[0])
        out["torch.compile"] = interleaved(device, call(pair.cand), call(compiled), sets).model_dump()
    flops = variant.flops() if variant is not None else None
    for t in out.values():
        t["flops"] = flops
    return out
