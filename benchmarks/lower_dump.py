"""Lower KernelBench problems with TorchInductor (Triton-only GEMM/conv templates) and record the code.

Runs on a GPU (Inductor emits Triton only for a GPU device). For every problem file in a
KernelBench-format directory it lowers the reference exactly as `xe-forge port` does
(xe_forge/proposers/lower/inductor.py: max_autotune, Triton-only backends, dynamic shapes without
duck sizing, transposed convolutions as phase convolutions, one graph, autotuning within --budget)
and appends one `Lowering` record per line: the wrapper code (kernel sources inline; its get_args()
is the signature the lowering serves), the launch config each autotuned kernel settled on, the
source of every graph input, what the port checks per call (Dynamo's shape guards, each size's
assumed range, the model's literal configuration), library calls kept, compile time, the budget and
whether it ran out, and max error against eager. `xe-forge port PROBLEM --lowered OUT.jsonl`
packages a record anywhere.

    python benchmarks/lower_dump.py PROBLEMS_DIR OUT.jsonl --dtype bfloat16 --workers 12 [--only 1-20] [--budget 60]

Workers share the GPU: autotuning choices can be noisier than on an idle device.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
import traceback
from pathlib import Path


def select(problems: Path, only: str | None) -> list[Path]:
    files = sorted((p for p in problems.glob("*_*.py") if p.name.split("_")[0].isdigit()),
                   key=lambda p: int(p.name.split("_")[0]))
    if only:
        keep: set[int] = set()
        for part in only.split(","):
            a, _, b = part.partition("-")
            keep |= set(range(int(a), int(b or a) + 1))
        files = [f for f in files if int(f.name.split("_")[0]) in keep]
    return files


def lower_file(path: Path, dtype: str, budget_s: float | None = None) -> str:
    """One problem -> one Lowering record as JSON (a failure is a record too, with the reason)."""
    from xe_forge.proposers.lower.models import Lowering
    from xe_forge.proposers.lower.runner import LowerJob, run

    try:
        lowering = run(LowerJob(reference_path=str(path), dtype=dtype, device="auto", out_path="", budget_s=budget_s))
    except BaseException as exc:  # one problem's failure is a record, not the end of the dump
        lowering = Lowering(problem=path.name, dtype=dtype, error=f"{type(exc).__name__}: {str(exc)[:2000]}",
                            traceback=traceback.format_exc()[-3000:])
    return lowering.model_dump_json()


def worker(queue, results, dtype: str, cache_root: str, budget_s: float | None = None) -> None:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = f"{cache_root}/{os.getpid()}"
    while True:
        item = queue.get()
        if item is None:
            return
        results.put(lower_file(Path(item), dtype, budget_s))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--only", default=None, help="ids, e.g. 1-20,37")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; stop collecting after it")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of autotuning per problem (0: unbounded)")
    args = ap.parse_args()
    import json

    files = select(args.problems, args.only)
    ctx = mp.get_context("spawn")
    queue, results = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(queue, results, args.dtype, "/tmp/inductor-cache", args.budget or None))
             for _ in range(args.workers)]
    for p in procs:
        p.start()
    for f in files:
        queue.put(str(f))
    for _ in procs:
        queue.put(None)
    start = time.monotonic()
    done = 0
    with args.out.open("a") as fh:
        while done < len(files) and time.monotonic() - start < args.deadline:
            try:
                line = results.get(timeout=5)
            except Exception:
                if not any(p.is_alive() for p in procs):
                    break
                continue
            done += 1
            fh.write(line + "\n")
            fh.flush()
            rec = json.loads(line)
            print(f"[{time.monotonic() - start:6.1f}s] {rec['problem']} {rec['dtype']} "
                  f"{'ok' if rec['ok'] else 'FAIL ' + (rec.get('error') or '')[:120]} "
                  f"{rec.get('compile_s', '')}s extern={rec.get('extern', '')}", flush=True)
    for p in procs:
        p.terminate()
    print(f"{done}/{len(files)} lowered in {time.monotonic() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
