"""Problems per hour of `xe-forge batch` on the CPU: local (1 worker), and --ray with 1 and 2 local nodes.

    PYTHONPATH=$PWD python benchmarks/ray_cpu.py OUT_DIR [COPIES]

The problems are COPIES (default 4) copies each of the test fixtures 1_Scale_Shift and
2_RowMax_Subtract (tests/batch/fixtures), so 2*COPIES problems, run as the tests run them: Triton's
interpreter, the rules engine, the dtype stage, one iteration. The nodes are tests/batch/ray_cluster.py's
(1 CPU each, on this machine), started before the clock starts and killed by id after. Writes
OUT_DIR/ray_cpu.json and prints a Markdown table for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.batch.conftest import PROBLEMS, SEEDS, batch_options  # noqa: E402
from tests.batch.ray_cluster import LocalRayCluster  # noqa: E402
from xe_forge.batch.runner import run_batch  # noqa: E402

KINDS = ("1_Scale_Shift", "2_RowMax_Subtract")


def lay_out(root: Path, copies: int) -> tuple[Path, Path]:
    problems, seeds = root / "problems", root / "seeds"
    problems.mkdir(parents=True)
    for i in range(copies * len(KINDS)):
        kind = KINDS[i % len(KINDS)]
        name = f"{i + 1}_{kind.split('_', 1)[1]}"
        shutil.copy(PROBLEMS / f"{kind}.py", problems / f"{name}.py")
        shutil.copytree(SEEDS / kind, seeds / name)
    return problems, seeds


def measure(label: str, problems: Path, seeds: Path, out: Path, **options: object) -> dict[str, object]:
    started = time.monotonic()
    s = run_batch(batch_options(out, problems_dir=str(problems), seeds_dir=str(seeds), **options))
    wall = time.monotonic() - started
    row = {"setup": label, "problems": s["problems"], "correct": s["correct"], "wall_s": round(wall, 1),
           "problems_per_hour": round(s["problems"] / wall * 3600, 1), "slots": s["workers"]}
    print(row, flush=True)
    return row


def main(out_dir: str, copies: int = 4) -> None:
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    problems, seeds = lay_out(work, copies)
    load_before = os.getloadavg()
    os.chdir(work)
    for var in ("XE_FORGE_MODEL", "XE_FORGE_API_BASE", "XE_FORGE_API_KEY"):
        os.environ.pop(var, None)
    rows = [measure("local, 1 worker", problems, seeds, work / "local", workers=1)]
    os.environ["OMP_NUM_THREADS"] = "1"  # what Ray gives a 1-CPU task: the fair local comparison
    rows.append(measure("local, 1 worker, OMP_NUM_THREADS=1", problems, seeds, work / "local-omp1", workers=1))
    del os.environ["OMP_NUM_THREADS"]
    cluster = LocalRayCluster(work, f"bench{os.getpid()}")
    try:
        cluster.start(0)
        rows.append(measure("ray, 1 node (1 CPU)", problems, seeds, work / "ray1", ray=cluster.address))
        cluster.start(1)
        rows.append(measure("ray, 2 nodes (1 CPU each)", problems, seeds, work / "ray2", ray=cluster.address))
    finally:
        cluster.stop()
    meta = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "python": platform.python_version(),
            "load_before": load_before, "load_after": os.getloadavg()}
    (out / "ray_cpu.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    print("| setup | problems | correct | wall | problems/hour |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['setup']} | {r['problems']} | {r['correct']} | {r['wall_s']} s | {r['problems_per_hour']} |")


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
