"""One batch problem, in its own process: optimize the seed (or port one), then time against eager.

The batch parent starts `python -m xe_forge.batch.child JOB.json` with the GPU it owns made the only
visible one, under a time limit; whatever happens here (crash, hang, bad input) ends this process
only. The result is written as JSON beside the job.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from xe_forge.errors import ForgeError


class ChildJob(BaseModel):
    problem_id: int
    name: str
    problem_path: str
    seed_path: str | None
    spec_path: str | None
    variant: str | None
    run_root: str
    run_id: str
    engine: str
    device: str
    target: str | None
    max_iters: int
    stages: str | None
    model: str | None
    timeout: float
    result_path: str
    compile: bool = False


def run(job: ChildJob) -> dict[str, Any]:
    from xe_forge.config import load_settings
    from xe_forge.pipeline.progress import Progress
    from xe_forge.pipeline.run import OptimizeArgs, optimize
    from xe_forge.problem.kernel import load_problem
    from xe_forge.verify.evaluate import Evaluator, input_allowance

    settings = load_settings(model=job.model)
    out: dict[str, Any] = {"problem_id": job.problem_id, "name": job.name, "run_id": job.run_id}
    seed = job.seed_path
    if seed is None:  # no seed: TorchInductor's lowering, else the LLM (xe_forge/batch/port.py)
        from xe_forge.batch.port import port_problem

        if job.spec_path is None:  # no seed, no spec: a --variant cannot apply, the problem's own shapes do
            job = job.model_copy(update={"variant": None})
        ported = port_problem(job, settings)
        if ported.seed is None:
            return {**out, "status": ported.status, "reason": ported.reason, "exit_code": ported.exit_code}
        seed = ported.seed
        out.update(ported=True, ported_by=ported.by)
    resume = job.run_id if (Path(job.run_root) / job.run_id / "args.json").is_file() else None
    args = OptimizeArgs(kernel=seed, reference=job.problem_path, spec=job.spec_path, variant=job.variant,
                        device=job.device, target=job.target, engine=job.engine, model=job.model,
                        stages=job.stages, max_iters=job.max_iters, timeout=job.timeout)
    result = optimize(args, settings, run_dir_root=Path(job.run_root), resume=resume, run_id=job.run_id,
                      progress=Progress(quiet=True))
    report = result.report
    out.update(status=result.status, exit_code=result.exit_code, degenerate=report.get("degenerate_reference", []),
               correct=bool(report["final"]["passed"]), device=report["device"])
    problem = load_problem(Path(result.run_dir) / "output.py", job.problem_path, job.spec_path, job.variant)
    with Evaluator(job.device, job.target, timeout=job.timeout, trials=1) as ev:
        if ev.measures_speed and out["correct"]:
            allow = input_allowance(problem)
            final = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, time_it=True, full=False,
                                compile_baseline=job.compile, name="final_vs_eager")
            seed_src = Path(seed).read_text()
            first = ev.evaluate(seed_src, problem, allow_torch=allow, time_it=True, full=False, name="seed_vs_eager")
            out["timings"] = {k: v.model_dump() for k, v in final.timings.items()}
            out["seed_timings"] = {k: v.model_dump() for k, v in first.timings.items()}
    return out


def main(path: str) -> int:
    job = ChildJob(**json.loads(Path(path).read_text()))
    try:
        result = run(job)
    except ForgeError as err:
        result = {"problem_id": job.problem_id, "name": job.name, "run_id": job.run_id, "status": "failed",
                  "reason": str(err), "exit_code": err.exit_code}
    except Exception as exc:
        result = {"problem_id": job.problem_id, "name": job.name, "run_id": job.run_id, "status": "failed",
                  "reason": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
    Path(job.result_path).write_text(json.dumps(result, default=str, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
