"""The lowering's own process: `python -m xe_forge.proposers.lower.runner JOB.json`.

Compiling runs the reference and Inductor's autotuner on the GPU; a crash, a hang or a fault there
must end this process only, and the GPU memory the compile held goes with it. The job names the
reference, the spec variant and dtype; the answer is a `Lowering` written as JSON beside the job.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xe_forge.proposers.lower.models import Lowering


class LowerJob(BaseModel):
    reference_path: str
    spec: dict[str, Any] | None = None
    variant: str | None = None
    dtype: str = "float32"
    precision: str = "keep"
    device: str = "auto"
    out_path: str
    budget_s: float | None = None  # seconds of autotuning (budget.py); None: unbounded


def run(job: LowerJob) -> Lowering:
    import torch

    from xe_forge.problem.cases import build_case, import_from_path, model_class
    from xe_forge.problem.spec import Spec
    from xe_forge.proposers.lower.inductor import lower_model
    from xe_forge.targets import get_device

    device = get_device(job.device)
    device.prepare_process()
    spec = Spec(**job.spec) if job.spec else None
    variant = spec.variant(job.variant) if spec else None
    ref = import_from_path(job.reference_path, "reference")
    case = build_case(ref, spec, variant, seed=0, device=device.torch_device(), dtype=job.dtype)
    torch.manual_seed(0)
    model = model_class(ref)(*case.init_args).to(device=device.torch_device(), dtype=getattr(torch, job.dtype))
    return lower_model(model, case.inputs, problem=Path(job.reference_path).name, dtype=job.dtype,
                       allow_tf32=job.precision == "allow-tf32", budget_s=job.budget_s)


def main(path: str) -> int:
    job = LowerJob.model_validate_json(Path(path).read_text())
    try:
        lowering = run(job)
    except BaseException as exc:  # the reason is the answer: the parent reports it, nothing is retried here
        message = f"{type(exc).__name__}: {str(exc).strip()[:1500]}"
        lowering = Lowering(problem=Path(job.reference_path).name, dtype=job.dtype, ok=False, error=message,
                            traceback=traceback.format_exc()[-2000:])
    Path(job.out_path).write_text(lowering.model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
