"""Profiler feedback on a GPU (issue 18): 4 examples' seeds and their rules-engine outputs under ncu.

For each example, `xe-forge optimize --engine rules --profile` runs at bench-gpu shapes: it profiles
the seed, the kernel entering each stage, and the output (ncu, --clock-control none), steers the
rules engine by each limiter, and leaves everything in its run directory (profiles/<hash>.json, the
raw ncu CSV profiles/<hash>.raw.txt, profiles/steering.json, roofline.png). This script runs the
examples in lanes (one per visible GPU, examples spread over them), then gathers:

    OUT/summary.md        seed and output per example: limiter, time, % of roof, speedup; steering
    OUT/records.json      every ProfileEntry (record + diagnosis) and every steering note
    OUT/roofline_<id>.png the run's roofline plot (seed and output as points)
    OUT/profiles.tgz      the run directories' profiles/ (raw ncu CSVs for test fixtures) + logs

    python benchmarks/profile_gpu.py OUT [IDS...]     (default ids: 12 30 76 99; DEADLINE env, seconds)
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

STAGES = os.environ.get("STAGES", "dtype,device_tuning")
MAX_ITERS = os.environ.get("MAX_ITERS", "2")
VARIANT = os.environ.get("VARIANT", "bench-gpu")


def gpu_count() -> int:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 1
    return max(1, sum(1 for line in out.splitlines() if line.startswith("GPU ")))


def optimize(example: Path, work: Path, gpu: int, deadline: float) -> dict:
    """One `xe-forge optimize --profile` run, bounded by what is left of the deadline."""
    left = deadline - time.monotonic() - 15
    if left < 60:
        return {"example": example.name, "status": "skipped: out of time"}
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
    cmd = [sys.executable, "-m", "xe_forge", "optimize", str(example / "kernel.py"), "--variant", VARIANT,
           "--engine", "rules", "--profile", "--stages", STAGES, "--max-iters", MAX_ITERS,
           "--run-dir", str(work / "runs"), "-o", str(work / f"{example.name}.out.py"), "--json"]
    start = time.monotonic()
    log = work / f"{example.name}.log"
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=left)
        result = json.loads(stdout[stdout.index("{"):]) if "{" in stdout else {}
        status = result.get("status", f"exit {proc.returncode}")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the run, its evaluation worker and any ncu under it
        stdout, stderr = proc.communicate()
        status = "timed out (profiles so far are kept)"
    log.write_text(stderr)
    print(f"{example.name}: {status} in {time.monotonic() - start:.0f} s", flush=True)
    return {"example": example.name, "status": status, "seconds": round(time.monotonic() - start, 1)}


def run_dir_of(work: Path, example: Path) -> Path | None:
    runs = (work / "runs").glob("*-kernel-*") if (work / "runs").is_dir() else []
    for run in runs:
        args = json.loads((run / "args.json").read_text())
        if Path(args["kernel"]).parent.name == example.name:
            return run
    return None


def gather(run: Path) -> dict:
    profiles = run / "profiles"
    entries = [json.loads(p.read_text()) for p in sorted(profiles.glob("*.json")) if p.name != "steering.json"]
    steering = json.loads((profiles / "steering.json").read_text()) if (profiles / "steering.json").is_file() else []
    report = json.loads((run / "report.json").read_text()) if (run / "report.json").is_file() else {}
    by_hash = {e["code_hash"]: e for e in entries}
    return {"run": run.name, "entries": entries, "steering": steering, "speed": report.get("speed"),
            "status": report.get("status"), "seed": by_hash.get(_hash(run / "input.py")),
            "output": by_hash.get(_hash(run / "output.py"))}


def _hash(path: Path) -> str | None:
    """The profile session's key for a kernel file (profile/session.py: sha256 of the code, 12 hex)."""
    return hashlib.sha256(path.read_text().encode()).hexdigest()[:12] if path.is_file() else None


def _row(entry: dict | None) -> str:
    if entry is None:
        return "- | - | -"
    d = entry["diagnosis"]
    point = d.get("roofline") or {}
    time_us = f"{point['time_us']:.1f}" if point.get("time_us") else "-"
    roof = f"{point['fraction_of_roof']:.0%}" if point.get("fraction_of_roof") is not None else "-"
    limiter = d["limiter"] if not entry["record"].get("unavailable") else f"unavailable: {entry['record']['unavailable']}"
    return f"{limiter} | {time_us} | {roof}"


def summary(results: list[dict]) -> str:
    lines = ["| example | seed limiter | seed us | seed % roof | output limiter | output us | output % roof | run |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        seed, out = r.get("seed"), r.get("output")
        lines.append(f"| {r['example']} | {_row(seed)} | {_row(out)} | {r.get('status')}; {r.get('speed') or ''} |")
    lines += ["", "Where the limiter changed the rules engine's next candidate:", ""]
    changed = [(r["example"], n) for r in results for n in r.get("steering", []) if n["steered"][:1] != n["unsteered"][:1]]
    for example, n in changed:
        lines.append(f"- {example}, stage {n['stage']}, limiter {n['limiter']}: first candidate `{n['steered'][0]}` "
                     f"(without the profile: `{n['unsteered'][0] if n['unsteered'] else 'none'}`)")
    if not changed:
        lines.append("- none in this run (each limiter's preferred recipe was already first)")
    lines += ["", "Kernels (dominant first):", ""]
    for r in results:
        for e in r.get("entries", []):
            for k in sorted(e["record"]["kernels"], key=lambda k: -(k.get("duration_us") or 0)):
                lines.append(f"- {r['example']} [{e['label']}] {k['name']}: {k.get('duration_us') or 0:.1f} us, "
                             f"SM {k.get('sm_throughput_pct')}%, DRAM {k.get('dram_throughput_pct')}%, tensor "
                             f"{k.get('tensor_pipe_pct')}%, occupancy {k.get('achieved_occupancy_pct')}%, "
                             f"{k.get('registers_per_thread')} regs, spill {k.get('spill_bytes_per_thread')} B, "
                             f"smem {k.get('shared_mem_per_block')} B, L2 hit {k.get('l2_hit_rate_pct')}%, "
                             f"grid {k.get('grid')}, block {k.get('block')}")
    return "\n".join(lines) + "\n"


def main(out: Path, ids: list[str]) -> None:
    deadline = time.monotonic() + float(os.environ.get("DEADLINE", "330"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(os.environ.get("WORK", "/tmp/profile_gpu"))
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    examples = [next(Path("examples").glob(f"{i}_*")) for i in ids]
    lanes = gpu_count()
    with ThreadPoolExecutor(lanes) as pool:
        def lane(index: int) -> list[dict]:
            return [optimize(ex, work, index, deadline) for ex in examples[index::lanes]]

        runs = [r for rs in pool.map(lane, range(lanes)) for r in rs]
    results = []
    for ex, status in zip(examples, sorted(runs, key=lambda r: [e.name for e in examples].index(r["example"])),
                          strict=True):
        run = run_dir_of(work, ex)
        gathered = gather(run) if run else {}
        results.append({**status, **gathered, "status": gathered.get("status") or status["status"]})
        if run and (run / "roofline.png").is_file():
            shutil.copyfile(run / "roofline.png", out / f"roofline_{ex.name.split('_')[0]}.png")
    (out / "records.json").write_text(json.dumps(results, indent=2))
    (out / "summary.md").write_text(summary(results))
    with tarfile.open(out / "profiles.tgz", "w:gz") as tar:
        for run in (work / "runs").glob("*") if (work / "runs").is_dir() else []:
            if (run / "profiles").is_dir():
                tar.add(run / "profiles", arcname=f"{run.name}/profiles")
        for log in work.glob("*.log"):
            tar.add(log, arcname=log.name)
    print((out / "summary.md").read_text())


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:] or ["12", "30", "76", "99"])
