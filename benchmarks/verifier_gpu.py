"""Verifier figures on a GPU (issue 3): check + bench on two examples, self-timing stability,
warm-worker overhead per candidate.

    python benchmarks/verifier_gpu.py OUT_DIR

Self-timing: a kernel timed against itself must report 1.00x within its own noise margin in at least
9 of 10 repetitions. Overhead: wall time of a warm-worker evaluation of an already-compiled
candidate minus nothing else (no timing requested), on a tiny variant, so it is the harness cost.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, input_allowance

EXAMPLES = ["12_Gemm_Multiply_LeakyReLU", "76_Gemm_Add_ReLU"]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    results: dict = {"examples": {}, "self_timing": {}, "overhead": {}}
    for name in EXAMPLES:
        kernel = Path("examples") / name / "kernel.py"
        problem = load_problem(kernel, variant="bench-gpu")
        allow = input_allowance(problem)
        with Evaluator("cuda", timeout=600) as ev:
            t0 = time.monotonic()
            check = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, unseen=True, time_it=False)
            t1 = time.monotonic()
            bench = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, time_it=True, full=False,
                                compile_baseline=True)
            t2 = time.monotonic()
            selfs = []
            for _ in range(10):
                v = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, time_it=True, full=False,
                                baseline_source=problem.kernel.source, name="self")
                t = v.timing
                selfs.append({"speedup": t.speedup, "margin": t.margin, "within": abs(t.speedup - 1) <= t.margin,
                              "faster": t.faster, "ms": t.candidate_ms})
        results["examples"][name] = {
            "check_passed": check.passed, "check_seconds": t1 - t0, "check_summary": check.summary(),
            "degenerate": [f for r in check.correctness for f in r.degenerate],
            "bench": {k: v.model_dump() for k, v in bench.timings.items()}, "bench_seconds": t2 - t1,
        }
        results["self_timing"][name] = {"runs": selfs, "within_margin": sum(s["within"] for s in selfs),
                                        "reported_faster": sum(s["faster"] for s in selfs)}
        print(name, "check", check.passed, "self within margin", sum(s["within"] for s in selfs), "/ 10", flush=True)
    # Warm-worker overhead: tiny ci variant, compiled once, then evaluated without timing.
    problem = load_problem(Path("examples") / EXAMPLES[0] / "kernel.py", variant="ci")
    with Evaluator("cuda", timeout=600, trials=1) as ev:
        ev.evaluate(problem.kernel.source, problem, allow_torch=input_allowance(problem), time_it=False)
        walls = []
        for _ in range(10):
            t0 = time.monotonic()
            v = ev.evaluate(problem.kernel.source, problem, allow_torch=input_allowance(problem), time_it=False,
                            full=False)
            walls.append(time.monotonic() - t0)
        results["overhead"] = {"median_s": statistics.median(walls), "min_s": min(walls), "passed": v.passed,
                               "note": "warm worker, compiled kernel, 1 trial, ci shapes, no timing"}
    (out / "verifier.json").write_text(json.dumps(results, indent=2, default=str))
    print(json.dumps({k: v for k, v in results.items() if k != "examples"}, indent=1, default=str)[:3000])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
