"""Issue 25's acceptance on one GPU: default `optimize` at bench-gpu on problems written for it, then
each output re-checked and re-timed in a fresh process by retime_gpu.py (not the verifier's timer).

    python benchmarks/accept_gpu.py OUT_DIR [--parallel 3] [--limit 240] [--deadline 420] [--only 1,2,4] [--lowering]

Problems: benchmarks/problems/accept/<id>_<Name>/ (kernel.py, kernel_pytorch.py, spec.yaml). Several
optimizes share the GPU; the device lock keeps every timed section exclusive. Writes OUT_DIR/accept.json
and prints one row per problem: wall seconds, status, the ratios the tool printed, and the re-timing's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "benchmarks" / "problems" / "accept"
TOOL_LABELS = {"input kernel": "output vs input", "eager": "output vs eager", "torch.compile": "output vs torch.compile",
               "lowering": "output vs lowering"}


def option(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    parallel, limit = int(option(argv, "--parallel", "3")), float(option(argv, "--limit", "240"))
    deadline = time.monotonic() + float(option(argv, "--deadline", "420"))
    only = option(argv, "--only", "")
    variant = option(argv, "--variant", "bench-gpu")
    folders = sorted(PROBLEMS.iterdir(), key=lambda p: int(p.name.split("_")[0]))
    if only:
        folders = [f for f in folders if f.name.split("_")[0] in only.split(",")]
    out.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict] = {}
    pending, active = list(folders), {}
    while pending or active:
        while pending and len(active) < parallel and time.monotonic() < deadline:
            folder = pending.pop(0)
            name = folder.name
            cmd = [sys.executable, "-m", "xe_forge", "optimize", str(folder / "kernel.py"), "--variant", variant,
                   "--run-dir", str(out / "runs" / name), "-o", str(out / f"{name}.py")]
            log = open(out / f"{name}.log", "w")
            active[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT), time.monotonic(), log)
        if not active:
            break
        time.sleep(1.0)
        for name, (proc, started, log) in list(active.items()):
            over = time.monotonic() - started > limit  # a run started before the deadline may finish
            if proc.poll() is None and not over:
                continue
            if proc.poll() is None:  # SIGTERM first: the run writes its report and keeps best_so_far.py
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
            proc.wait()
            log.close()
            runs[name] = {"rc": proc.returncode, "wall_s": round(time.monotonic() - started, 1)}
            del active[name]
    for name in [f.name for f in pending]:
        runs[name] = {"rc": None, "skipped": "deadline"}
    cases = []
    for name, run in runs.items():
        reports = sorted((out / "runs" / name).glob("*/report.json"))
        output = out / f"{name}.py"
        if not output.exists():  # stopped before its end: what it had verified by then
            kept = sorted((out / "runs" / name).glob("*/best_so_far.py"))
            if not kept:
                continue
            output, run["output"] = kept[-1], "best_so_far.py (stopped)"
        if not reports:
            continue
        report = json.loads(reports[-1].read_text())
        run["status"] = report.get("status")
        tool = {TOOL_LABELS[k]: v["speedup"] for k, v in (report.get("timings") or {}).items() if k in TOOL_LABELS}
        run["tool"] = tool
        folder = PROBLEMS / name
        case = {"name": name, "reference": str(folder / "kernel_pytorch.py"), "spec": str(folder / "spec.yaml"),
                "variant": variant, "input": str(folder / "kernel.py"), "output": str(output),
                "tool": tool}
        path = out / f"case_{name}.json"
        path.write_text(json.dumps(case))
        cases.append(str(path))
    if cases:
        lower = ["--lowering"] if "--lowering" in argv else []  # re-time the Triton-only lowering too (~30 s each)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "retime_gpu.py"), str(out / "retime.json"), *cases,
                        *lower],
                       cwd=ROOT, timeout=max(30.0, deadline + 240 - time.monotonic()))
    retimed = {r["name"]: r for r in json.loads((out / "retime.json").read_text())} if cases else {}
    for name, run in runs.items():
        run["retime"] = retimed.get(name)
    (out / "accept.json").write_text(json.dumps(runs, indent=1))
    for name, run in runs.items():
        r = run.get("retime") or {}
        ratios = {k.replace("output vs ", ""): round(v, 3) for k, v in (r.get("ratios") or {}).items()}
        print(f"{name}: rc={run.get('rc')} {run.get('wall_s')}s {run.get('status')} tool={run.get('tool')} "
              f"retime={ratios} err={r.get('max_rel_err')} {r.get('error', '')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
