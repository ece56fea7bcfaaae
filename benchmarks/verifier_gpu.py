"""Verifier figures on a GPU (issues 13 and 21), in one call of under 8 minutes on an H200.

    python benchmarks/verifier_gpu.py OUT_DIR        # writes OUT_DIR/verifier.json, prints a summary

Sections (each bounded; a failure is recorded and the next one runs):
- tf32: an fp32 `keep` contract with tl.dot in TF32 must fail at 1e-4 on CUDA (the interpreter cannot
  tell), pass under `allow-tf32`; the IEEE kernel passes.
- kernel_list: the profiler's GPU kernel list on two examples (a GEMM, a conv kept in cuDNN): no
  foreign kernel; and a kernel whose pass-through runs in a jiterator CUDA kernel (static scan off):
  flagged by the kernel list, which the dispatch audit cannot see.
- self_timing: a kernel timed against itself at bench-gpu, 10 repetitions: 1.00x within its margin.
- overhead: warm evaluations of a compiled kernel at ci shapes (1 trial, no timing): median wall.
- perturbed: KernelBench #85, #33, #23 ports (honest, affine-skipping, zeros) at GPU sizes, fp32 and bf16.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, input_allowance

FIX = Path("tests/verify/fixtures")
EXAMPLES = ["12_Gemm_Multiply_LeakyReLU", "76_Gemm_Add_ReLU"]
DEADLINE = 440.0  # seconds: later sections are skipped past this, so the results are always written
STARTED = time.monotonic()


def summary(verdict: Any) -> dict[str, Any]:
    reports = verdict.correctness
    return {"passed": verdict.passed, "stage": verdict.stage_failed, "seconds": round(verdict.seconds, 2),
            "findings": [f.render()[:300] for f in verdict.findings[:4]], "notes": verdict.notes[:4],
            "shapes": len(reports), "degenerate": reports[0].degenerate if reports else [],
            "worst_err": max((c.max_abs_err or 0.0 for r in reports for t in r.trials for c in t.comparisons),
                             default=None),
            "kernel_list": reports[0].audit.kernel_list if reports and reports[0].audit else "",
            "foreign_kernels": reports[0].audit.foreign_kernels if reports and reports[0].audit else []}


def tf32(ev: Evaluator) -> dict[str, Any]:
    linear = load_problem(FIX / "linear" / "good.py", FIX / "linear" / "ref_pytorch.py", FIX / "linear" / "spec.yaml")
    loose = linear.model_copy(update={"spec": linear.spec.model_copy(update={"precision": "allow-tf32"})})
    tf32_src = (FIX / "precision" / "tf32_dot.py").read_text()
    return {"ieee_keep": summary(ev.evaluate(linear.kernel.source, linear)),
            "tf32_keep": summary(ev.evaluate(tf32_src, linear)),
            "tf32_allow_tf32": summary(ev.evaluate(tf32_src, loose))}


def kernel_list(ev: Evaluator) -> dict[str, Any]:
    out = {}
    for name in ("12_Gemm_Multiply_LeakyReLU", "1_Conv2D_ReLU_BiasAdd"):
        problem = load_problem(Path("examples") / name / "kernel.py")
        out[name] = summary(ev.evaluate(problem.kernel.source, problem, allow_torch=input_allowance(problem)))
    linear = load_problem(FIX / "linear" / "good.py", FIX / "linear" / "ref_pytorch.py", FIX / "linear" / "spec.yaml")
    ev.static_findings = lambda source, allow_torch: []  # the scan refuses jiterator; show the kernel list does too
    try:
        out["jiterator_pass_through"] = summary(ev.evaluate((FIX / "audit" / "jiterator_epilogue.py").read_text(),
                                                            linear))
    finally:
        del ev.static_findings
    return out


def self_timing(ev: Evaluator) -> dict[str, Any]:
    out = {}
    for name in EXAMPLES:
        problem = load_problem(Path("examples") / name / "kernel.py", variant="bench-gpu")
        allow, src = input_allowance(problem), problem.kernel.source
        check = ev.evaluate(src, problem, allow_torch=allow, unseen=True, time_it=False)
        bench = ev.evaluate(src, problem, allow_torch=allow, time_it=True, full=False, compile_baseline=True)
        runs = []
        for _ in range(10):
            v = ev.evaluate(src, problem, allow_torch=allow, time_it=True, full=False, baseline_source=src, name="self")
            t = v.timing
            runs.append({"passed": v.passed, "findings": [f.render()[:200] for f in v.findings[:2]],
                         "speedup": t.speedup if t else None, "margin": t.margin if t else None,
                         "within": bool(t and abs(t.speedup - 1) <= t.margin), "faster": bool(t and t.faster),
                         "ms": t.candidate_ms if t else None, "reps": t.reps if t else None,
                         "seconds": round(v.seconds, 2)})
        out[name] = {"check": summary(check), "bench": {k: v.model_dump() for k, v in bench.timings.items()},
                     "bench_findings": [f.render()[:300] for f in bench.findings[:3]],
                     "within_margin": sum(r["within"] for r in runs), "reported_faster": sum(r["faster"] for r in runs),
                     "runs": runs}
        print(name, "check", check.passed, "self within margin", out[name]["within_margin"], "/ 10", flush=True)
    return out


def overhead(ev: Evaluator) -> dict[str, Any]:
    problem = load_problem(Path("examples") / EXAMPLES[0] / "kernel.py", variant="ci")
    allow = input_allowance(problem)
    ev.evaluate(problem.kernel.source, problem, allow_torch=allow, time_it=False)
    walls = []
    for _ in range(10):
        t0 = time.monotonic()
        v = ev.evaluate(problem.kernel.source, problem, allow_torch=allow, time_it=False, full=False)
        walls.append(time.monotonic() - t0)
    return {"median_s": statistics.median(walls), "min_s": min(walls), "passed": v.passed,
            "note": "warm workers, compiled kernel, 1 trial, ci shapes, no timing"}


def perturbed(ev: Evaluator) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cases = [("85", "85_Conv2d_GroupNorm_Scale_MaxPool_Clamp.py", ["85_port.py", "85_skip_affine.py"]),
             ("33", "33_Gemm_Scale_BatchNorm.py", ["33_port.py", "33_skip_affine.py"]),
             ("23", "23_Conv3d_GroupNorm_Mean.py", ["23_port.py", "23_zeros.py"])]
    kb = FIX / "kb"
    for precision in ("keep", "bf16"):
        for key, reference, kernels in cases:
            for kernel in kernels:
                if time.monotonic() - STARTED > DEADLINE:
                    out[f"{precision}/{kernel}"] = "skipped: time"
                    continue
                problem = load_problem(kb / kernel, kb / reference, kb / f"{key}_spec.yaml", "gpu")
                problem = problem.model_copy(update={"spec": problem.spec.model_copy(update={"precision": precision})})
                verdict = ev.evaluate(problem.kernel.source, problem, allow_torch={"self.conv"},
                                      unseen=kernel.endswith("port.py"))
                out[f"{precision}/{kernel}"] = summary(verdict)
                print(precision, kernel, verdict.passed, verdict.stage_failed, flush=True)
    return out


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    with Evaluator("cuda", timeout=300) as ev:
        for name, section in (("tf32", tf32), ("kernel_list", kernel_list), ("overhead", overhead),
                              ("self_timing", self_timing), ("perturbed", perturbed)):
            if time.monotonic() - STARTED > DEADLINE:
                results[name] = "skipped: time"
                continue
            t0 = time.monotonic()
            try:
                results[name] = section(ev)
            except Exception as exc:  # record and go on: one device call must bring back everything it can
                results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            results[f"{name}_seconds"] = round(time.monotonic() - t0, 1)
            (out_dir / "verifier.json").write_text(json.dumps(results, indent=2, default=str))
            print("==", name, results[f"{name}_seconds"], "s", flush=True)
    print(json.dumps({k: v for k, v in results.items() if k not in ("self_timing", "perturbed")}, indent=1,
                     default=str)[:6000])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
