"""The offline rules engine on the examples and the style variants, timed against PyTorch (issue 14).

    python benchmarks/engine_gpu.py OUT_DIR [--dtypes bf16,fp32] [--workers 8] [--deadline 450]
                                            [--only 12,s01,...] [--stages dtype,fusion] [--no-compile]

One call: every problem gets `xe-forge optimize --engine rules --device cuda` at its bench-gpu shapes
(bf16 for the GEMM family, as the examples' specs say; fp32 from a spec copy), several problems at
once on each GPU, while torch.compile(mode="max-autotune-no-cudagraphs") of each reference warms its
caches in other workers. Then one process per GPU times, interleaved with L2 flushes, the engine's
output, eager PyTorch, the compiled reference and cuBLAS's product for the first GEMM alone. Every
step is a subprocess with a timeout: a failure or a hang is a record in results.json, never the end
of the run. Work not finished by the deadline is recorded as such. Results: OUT_DIR/results.json,
summary.md, engine.tgz (run reports and logs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
STYLES = ROOT / "tests" / "proposers" / "styles"
TIME_RESERVE_S = 120.0
INTERRUPT_GRACE_S = 20.0


def problems(only: set[str]) -> list[dict[str, Any]]:
    examples = {d.name.split("_")[0]: d for d in sorted((ROOT / "examples").iterdir()) if (d / "kernel.py").is_file()}
    found = [{"name": d.name, "key": key, "seed": str(d / "kernel.py"), "reference": str(d / "kernel_pytorch.py"),
              "spec": str(d / "spec.yaml")} for key, d in examples.items()]
    for style in sorted(STYLES.glob("s*.py")):
        d = examples[style.stem.split("_")[1].removeprefix("ex")]
        found.append({"name": style.stem, "key": style.stem[:3], "seed": str(style),
                      "reference": str(d / "kernel_pytorch.py"), "spec": str(d / "spec.yaml")})
    return [p for p in found if not only or p["key"] in only]


def spec_for(item: dict[str, Any], dtype: str, tmp: Path) -> tuple[str, str]:
    """(spec path, variant) for this dtype: bench-gpu as written, or a float32 copy of it."""
    if dtype == "bf16":
        return item["spec"], "bench-gpu"
    spec = yaml.safe_load(Path(item["spec"]).read_text())
    spec["bench-fp32"] = [{**v, "dtype": "float32"} for v in spec["bench-gpu"]]  # explicit tolerances stay
    path = tmp / f"{item['name']}_fp32.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return str(path), "bench-fp32"


def run_task(cmd: list[str], gpu: int, timeout: float, log: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run one step; at its time limit it gets Ctrl-C first (an interrupted run still writes its report,
    which says how far each stage got), then SIGKILL."""
    started = time.monotonic()
    with log.open("w") as handle:
        proc = subprocess.Popen(cmd, stdout=handle, stderr=subprocess.STDOUT,
                                env={**env, "CUDA_VISIBLE_DEVICES": str(gpu)}, cwd=ROOT)
        try:
            code: int | str = proc.wait(timeout=max(5.0, timeout))
        except subprocess.TimeoutExpired:
            code = "timeout"
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=INTERRUPT_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return {"exit": code, "seconds": round(time.monotonic() - started, 1)}


def engine_cmd(item: dict[str, Any], out: Path, runs: Path, stages: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "xe_forge", "optimize", item["seed"], "--reference", item["reference"],
           "--spec", item["spec_used"], "--variant", item["variant"], "--device", "cuda", "--engine", "rules",
           "--max-iters", "2", "--run-dir", str(runs / item["id"]), "-o", str(out)]  # progress lines in the log
    return cmd + (["--stages", stages] if stages else [])


def phase_one(items: list[dict[str, Any]], args: argparse.Namespace, work: Path, gpus: int, env: dict[str, str],
              end: float) -> None:
    """Engine runs and compile warm-ups, `workers` at a time, spread over the GPUs."""
    tasks = []  # per dtype, bf16 first: an engine run, then its reference's torch.compile warm-up
    for dtype in dict.fromkeys(it["dtype"] for it in items):
        for i, item in enumerate(items):
            if item["dtype"] == dtype:
                tasks += [("engine", i, item)] + ([("compile", i, item)] if args.compile else [])

    def run(job: tuple[int, tuple[str, int, dict[str, Any]]]) -> None:
        slot, (kind, index, item) = job
        left = end - time.time()
        if left < 20:
            item[f"{kind}_result"] = {"exit": "not started: deadline"}
            return
        gpu = slot % gpus
        log = work / "logs" / f"{item['id']}_{kind}.log"
        if kind == "engine":
            out = work / "outputs" / f"{item['id']}.py"
            item["engine_result"] = run_task(engine_cmd(item, out, work / "runs", args.stages), gpu,
                                             min(args.engine_limit, left), log, env)
            item["output"] = str(out) if out.is_file() else None
        else:
            cmd = [sys.executable, str(ROOT / "benchmarks" / "engine_time.py"), "compile", str(work / "plan.json"),
                   str(index)]
            item["compile_result"] = run_task(cmd, gpu, min(args.compile_limit, left), log,
                                              env | {"TORCHINDUCTOR_COMPILE_THREADS": "2"})

    (work / "plan.json").write_text(json.dumps({"items": items}, default=str))
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        list(pool.map(run, enumerate(tasks)))


def phase_two(items: list[dict[str, Any]], work: Path, gpus: int, env: dict[str, str], end: float) -> list[dict]:
    """One timing process per GPU, each over its share of the problems."""
    procs = []
    for gpu in range(gpus):
        share = [it | {"kernel_used": it.get("output") or it["seed"],
                       "compiled": it.get("compile_result", {}).get("exit") == 0} for it in items[gpu::gpus]]
        plan = work / f"time_plan_{gpu}.json"
        plan.write_text(json.dumps({"items": share, "deadline": end, "budget_s": 2.0}, default=str))
        out = work / f"times_{gpu}.json"
        log = (work / "logs" / f"timing_{gpu}.log").open("w")
        cmd = [sys.executable, str(ROOT / "benchmarks" / "engine_time.py"), "time", str(plan), str(out)]
        procs.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                                       env={**env, "CUDA_VISIBLE_DEVICES": str(gpu)}), out))
    records = []
    for proc, out in procs:
        try:
            proc.wait(timeout=max(10.0, end - time.time() + 30))
        except subprocess.TimeoutExpired:
            proc.kill()
        records += json.loads(out.read_text()) if out.is_file() else []
    return records


def _report(run_dir: Path) -> dict[str, Any]:
    reports = sorted(run_dir.glob("*/report.json"))
    if not reports:
        return {}
    report = json.loads(reports[-1].read_text())
    stages = [{"stage": s.get("stage"), "improved": s.get("improved"), "accepted": [
        c.get("recipe") for c in s.get("candidates", []) if c.get("accepted")]} for s in report.get("stages", [])]
    return {"status": report.get("status"), "stages": stages}


def summarize(items: list[dict[str, Any]], times: list[dict], out: Path, started: float) -> None:
    by_key = {(t["problem"], t["dtype"]): t for t in times}
    rows = []
    for item in items:
        record = {"problem": item["name"], "dtype": item["dtype"], "engine": item.get("engine_result"),
                  "compile_warmup": item.get("compile_result"), "output_is_seed": not item.get("output")}
        record |= _report(Path(item["run_root"]) / item["id"])
        record |= {k: v for k, v in by_key.get((item["name"], item["dtype"]), {}).items() if k not in record}
        rows.append(record)
    summary: dict[str, Any] = {"wall_s": round(time.time() - started, 1), "problems": len(rows)}
    for dtype in sorted({r["dtype"] for r in rows}):
        for base in ("eager", "compile", "cublas_mm"):
            ratios = [r[f"output_vs_{base}"] for r in rows if r["dtype"] == dtype and r.get(f"output_vs_{base}")]
            if ratios:
                summary[f"{dtype}_geomean_vs_{base}"] = round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 3)
                summary[f"{dtype}_timed_vs_{base}"] = len(ratios)
        below = [r["problem"] for r in rows if r["dtype"] == dtype and r.get("output_vs_eager", 1) < 0.85]
        summary[f"{dtype}_below_0.85x_eager"] = below
    (out / "results.json").write_text(json.dumps({"summary": summary, "records": rows}, indent=1, default=str))
    lines = ["| problem | dtype | engine | output ms | eager ms | compile ms | cuBLAS mm ms | vs eager | vs compile |",
             "|---|---|---|---|---|---|---|---|---|"]
    keys = ("output_ms", "eager_ms", "compile_ms", "cublas_mm_ms", "output_vs_eager", "output_vs_compile")
    for r in rows:
        cells = [f"{r[k]:.3f}" if isinstance(r.get(k), float) else "-" for k in keys]
        engine = r.get("status") or (r.get("engine") or {}).get("exit")
        lines.append(f"| {r['problem']} | {r['dtype']} | {engine} | " + " | ".join(cells) + " |")
    (out / "summary.md").write_text(json.dumps(summary, indent=1) + "\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines[-len(rows) - 2:]))
    print(json.dumps(summary, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--dtypes", default="bf16,fp32")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--deadline", type=float, default=450.0, help="seconds for the whole run")
    parser.add_argument("--engine-limit", type=float, default=240.0)
    parser.add_argument("--compile-limit", type=float, default=150.0)
    parser.add_argument("--only", default="", help="example numbers and style keys (12,s01,...)")
    parser.add_argument("--stages", default=None, help="stages for the engine (default: its own plan)")
    parser.add_argument("--no-compile", dest="compile", action="store_false")
    args = parser.parse_args()
    started = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="engine-gpu-"))
    for sub in ("logs", "outputs", "runs"):
        (work / sub).mkdir()
    import torch

    gpus = max(1, torch.cuda.device_count())
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(work / "inductor"), "TRITON_CACHE_DIR": str(work / "triton"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("TRITON_INTERPRET", None)
    items = []
    for dtype in args.dtypes.split(","):  # bf16 first: fp32 gets what time is left
        for p in problems({k.strip() for k in args.only.split(",") if k.strip()}):
            spec, variant = spec_for(p, dtype, work)
            items.append(p | {"dtype": dtype, "id": f"{p['name']}_{dtype}", "spec_used": spec, "variant": variant,
                              "run_root": str(work / "runs")})
    for item in items:  # the time-side plan reads the spec of this dtype
        item["spec"] = item["spec_used"]
    end_one = started + args.deadline - TIME_RESERVE_S
    phase_one(items, args, work, gpus, env, end_one)
    times = phase_two(items, work, gpus, env, started + args.deadline)
    summarize(items, times, args.out, started)
    with tarfile.open(args.out / "engine.tgz", "w:gz") as tar:
        tar.add(work / "logs", arcname="logs")
        tar.add(work / "outputs", arcname="outputs")
        for report in (work / "runs").glob("*/*/report.json"):
            tar.add(report, arcname=f"reports/{report.parent.parent.name}.json")
        for store in (work / "runs").glob("*/*/store.sqlite"):  # every verdict, with its phase_seconds
            tar.add(store, arcname=f"stores/{store.parent.parent.name}.sqlite")


if __name__ == "__main__":
    main()
