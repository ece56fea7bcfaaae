"""Every example at its bench-gpu variant on a GPU (issue 7): full verification of the seed, then the
seed and the reference (eager) timed interleaved; roofline floor from the measured H200 ceilings.

    python benchmarks/examples_gpu.py OUT_JSON [ID ...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from xe_forge.problem.kernel import load_problem
from xe_forge.problem.roofline import problem_facts
from xe_forge.verify.evaluate import Evaluator, input_allowance


def main(out: Path, ids: list[str]) -> None:
    rows = []
    examples = sorted(p for p in Path("examples").iterdir() if (p / "kernel.py").is_file())
    if ids:
        examples = [p for p in examples if p.name.split("_")[0] in ids]
    with Evaluator("cuda", target="nvidia-sm90", timeout=600) as ev:
        for ex in examples:
            problem = load_problem(ex / "kernel.py", variant="bench-gpu")
            t0 = time.monotonic()
            v = ev.evaluate(problem.kernel.source, problem, allow_torch=input_allowance(problem), unseen=True)
            ctx = problem_facts(problem, "nvidia-sm90")
            t = v.timing
            row = {"example": ex.name, "passed": v.passed, "summary": v.summary(), "seconds": time.monotonic() - t0,
                   "seed_ms": t.candidate_ms if t else None, "eager_ms": t.baseline_ms if t else None,
                   "seed_vs_eager": t.speedup if t else None, "floor_ms": ctx.floor_ms, "dtype": ctx.dtype,
                   "degenerate": [f for r in v.correctness for f in r.degenerate],
                   "max_abs_err": max((c.max_abs_err or 0) for r in v.correctness for tr in r.trials
                                      for c in tr.comparisons) if v.correctness else None}
            rows.append(row)
            print(json.dumps(row, default=str), flush=True)
    out.write_text(json.dumps(rows, indent=2, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
