"""Issue 22 in one device call: every level-2 problem lowered, packaged, verified, then timed.

    python benchmarks/lower_port_gpu.py PROBLEMS_DIR OUT_DIR [--dtype bfloat16] [--workers 14]
        [--lower-deadline 290] [--deadline 450] [--only 1-20] [--lowerings FILE.jsonl.gz] [--specs DIR]

Phase A, in parallel worker processes: lower the reference with TorchInductor (Triton-only GEMM/conv
templates; xe_forge/proposers/lower), package the kernels as a standalone Model module, and verify it
with the product's Evaluator (static checks, 3 trials, same-storage call, ghost replay, unseen batch
sizes). `--lowerings` reuses recorded lowerings (a previous call's lowerings_<dtype>.jsonl.gz) and
skips the compile. Phase B: for every verified port, the packaged module, eager PyTorch and default
torch.compile are built and warmed in parallel, then timed one problem at a time under a lock
(events, L2 flush, alternating order, median of per-pair ratios: the verifier's timing summary).
Deadlines keep the call bounded: what is not reached is reported as such.

Writes under OUT_DIR: lower_port_<dtype>.json (per problem: lowering, packaging, verdict, timings;
summary), lowerings_<dtype>.jsonl.gz (the records), ports_<dtype>.jsonl.gz (packaged sources), log.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def phase_a_worker(jobs, results, args: dict) -> None:
    """Lower (or take the recorded lowering), package and verify problems until told to stop."""
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = f"/tmp/inductor-cache/{os.getpid()}"
    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower.models import Lowering
    from xe_forge.proposers.lower.runner import LowerJob, run
    from xe_forge.proposers.lower.service import verify_port
    from xe_forge.verify.evaluate import Evaluator, declared_allowance

    evaluator = Evaluator(args["device"], timeout=600, trials=3)
    try:
        while (item := jobs.get()) is not None:
            path, recorded, spec = item
            results.put(("start", os.getpid(), path))
            started = time.monotonic()
            if recorded is not None:
                lowering = Lowering.model_validate_json(recorded)
            else:
                try:
                    lowering = run(LowerJob(reference_path=path, dtype=args["dtype"], device=args["device"],
                                            out_path="", spec=None))
                except BaseException as exc:
                    lowering = Lowering(problem=Path(path).name, dtype=args["dtype"], error=f"{type(exc).__name__}: "
                                        f"{str(exc)[:1500]}")
            problem = load_problem(path, path, spec)
            outcome = verify_port(problem, evaluator, lowering, allow_torch=declared_allowance(problem), unseen=True,
                                  time_it=False)
            verdict = outcome.verdict
            row = {"problem": Path(path).name, "lowered": lowering.ok, "lower_error": lowering.error,
                   "compile_s": lowering.compile_s, "rewrites": lowering.rewrites, "extern": lowering.extern,
                   "packaged": outcome.packaged is not None, "kernels": len(outcome.packaged.kernels)
                   if outcome.packaged else None, "verified": outcome.passed, "reason": outcome.reason[:600],
                   "stage_failed": verdict.stage_failed if verdict else None,
                   "max_abs_err": max((c.max_abs_err or 0.0 for r in verdict.correctness for t in r.trials
                                       for c in t.comparisons), default=None) if verdict else None,
                   "seconds": round(time.monotonic() - started, 1)}
            results.put(("done", os.getpid(), path, row, lowering.model_dump_json() if recorded is None else None,
                         outcome.packaged.source if outcome.packaged else None))
    finally:
        evaluator.close()


def _interleaved(device, candidate, baseline, input_sets, reps: int):
    """Time candidate(inputs) and baseline(inputs) alternately (order alternating, L2 flushed by
    device.time_ms); the verifier's summary (median of per-pair ratios, spread) over the pairs."""
    from xe_forge.verify.timing import summarize

    cand_ms, base_ms, ratios = [], [], []
    for i in range(reps):
        inputs = input_sets[i % len(input_sets)]
        first, second = (candidate, baseline) if i % 2 == 0 else (baseline, candidate)
        t1 = device.time_ms(lambda f=first, x=inputs: f(x))
        t2 = device.time_ms(lambda f=second, x=inputs: f(x))
        c, b = (t1, t2) if i % 2 == 0 else (t2, t1)
        cand_ms.append(c)
        base_ms.append(b)
        ratios.append(b / max(c, 1e-9))
    return summarize(cand_ms, base_ms, ratios)


def phase_b_worker(jobs, results, lock, args: dict) -> None:
    """Build and warm three versions of a problem in parallel; time them one problem at a time."""
    import copy
    import tempfile

    import torch

    from xe_forge.problem.cases import build_case, import_from_path, model_class
    from xe_forge.targets import get_device
    from xe_forge.verify.timing import WARMUP, choose_reps
    from xe_forge.verify.weights import load_into, pair_tensors

    device = get_device(args["device"])
    dtype = args["dtype"]
    tdtype = getattr(torch, dtype)
    while (item := jobs.get()) is not None:
        path, source = item
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
                fh.write(source)
            ref_mod = import_from_path(path, "reference")
            cand_mod = import_from_path(fh.name, "candidate")
            init = build_case(ref_mod, None, None, seed=0, device="cpu", dtype=dtype).init_args
            torch.manual_seed(0)
            ref = model_class(ref_mod)(*init).to(device.torch_device())
            torch.manual_seed(0)
            cand = model_class(cand_mod)(*init).to(device.torch_device())
            state = ref.state_dict()
            load_into(cand, state, pair_tensors(state, cand.state_dict()))
            cand = cand.to(tdtype)
            eager = copy.deepcopy(ref).to(tdtype)
            compiled = torch.compile(copy.deepcopy(ref).to(tdtype))
            sets = [build_case(ref_mod, None, None, seed=31 * i, device=device.torch_device(), dtype=dtype).inputs
                    for i in range(3)]

            def call(model):
                def run(inputs):
                    with torch.no_grad():
                        return model(*inputs)
                return run

            call(compiled)(sets[0])  # compiles here, outside the timing lock
            with lock:
                for i in range(WARMUP):
                    for model in (cand, eager, compiled):
                        call(model)(sets[i % len(sets)])
                device.synchronize()
                probe = call(cand)
                reps = choose_reps(device.time_ms(lambda f=probe, x=sets[0]: f(x)), budget_ms=args["budget_ms"], hi=100)
                vs_eager = _interleaved(device, call(cand), call(eager), sets, reps)
                vs_compile = _interleaved(device, call(cand), call(compiled), sets, reps)
            row = {"candidate_ms": vs_eager.candidate_ms, "eager_ms": vs_eager.baseline_ms,
                   "compile_ms": vs_compile.baseline_ms, "vs_eager": vs_eager.speedup, "vs_compile": vs_compile.speedup,
                   "spread": max(vs_eager.spread, vs_compile.spread), "reps": reps}
        except Exception as exc:  # a problem that cannot be timed is reported, the others go on
            row = {"timing_error": f"{type(exc).__name__}: {str(exc)[:400]}"}
        results.put((Path(path).name, row))


def run_phase_a(files, recorded, specs, args, deadline: float, log) -> tuple[dict, dict, dict]:
    ctx = mp.get_context("spawn")
    jobs, results = ctx.Queue(), ctx.Queue()
    for f in files:
        jobs.put((str(f), recorded.get(f.name), specs.get(f.name)))
    procs: dict[int, mp.Process] = {}

    def start() -> None:
        p = ctx.Process(target=phase_a_worker, args=(jobs, results, args))
        p.start()
        procs[p.pid] = p

    for _ in range(min(args["workers"], len(files))):
        start()
    rows, records, sources, running = {}, {}, {}, {}
    t0 = time.monotonic()
    while len(rows) < len(files) and time.monotonic() < deadline:
        try:
            msg = results.get(timeout=2)
        except Exception:
            msg = None
        if msg and msg[0] == "start":
            running[msg[1]] = (msg[2], time.monotonic())
        elif msg:
            _, pid, path, row, record, source = msg
            running.pop(pid, None)
            rows[row["problem"]] = row
            if record:
                records[row["problem"]] = record
            if source:
                sources[row["problem"]] = source
            log(f"[A {time.monotonic() - t0:6.1f}s] {row['problem'][:48]:48s} lowered={row['lowered']} "
                f"verified={row['verified']} {row['reason'][:90]}")
        for pid, (path, since) in list(running.items()):
            if not procs[pid].is_alive() or time.monotonic() - since > args["problem_timeout"]:
                procs[pid].kill()
                name = Path(path).name
                rows[name] = {"problem": name, "lowered": False, "verified": False,
                              "reason": "the worker died or exceeded the per-problem time limit"}
                running.pop(pid)
                log(f"[A] {name}: worker lost")
                start()
    for _ in procs:
        jobs.put(None)
    for p in procs.values():
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
    for f in files:
        rows.setdefault(f.name, {"problem": f.name, "lowered": None, "verified": False,
                                 "reason": "not reached before the lowering deadline"})
    return rows, records, sources


def run_phase_b(rows, sources, args, deadline: float, log) -> None:
    ctx = mp.get_context("spawn")
    jobs, results, lock = ctx.Queue(), ctx.Queue(), ctx.Lock()
    todo = [name for name, row in rows.items() if row.get("verified") and name in sources]
    for name in todo:
        jobs.put((str(Path(args["problems"]) / name), sources[name]))
    procs = [ctx.Process(target=phase_b_worker, args=(jobs, results, lock, args))
             for _ in range(min(args["timing_workers"], len(todo)))]
    for p in procs:
        p.start()
    for _ in procs:
        jobs.put(None)
    got = 0
    while got < len(todo) and time.monotonic() < deadline:
        try:
            name, timing = results.get(timeout=2)
        except Exception:
            if not any(p.is_alive() for p in procs):
                break
            continue
        got += 1
        rows[name].update(timing)
        log(f"[B] {name[:48]:48s} " + (f"{timing['vs_eager']:.2f}x eager, {timing['vs_compile']:.2f}x compile"
                                        if "vs_eager" in timing else timing.get("timing_error", "")))
    for p in procs:
        p.kill()
    for name in todo:
        if "vs_eager" not in rows[name] and "timing_error" not in rows[name]:
            rows[name]["timing_error"] = "not timed before the deadline"


def summarize(rows: dict) -> dict:
    def geomean(values):
        values = [v for v in values if v and v > 0]
        return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None

    timed = [r for r in rows.values() if "vs_eager" in r]
    out = {"problems": len(rows), "lowered": sum(bool(r.get("lowered")) for r in rows.values()),
           "packaged": sum(bool(r.get("packaged")) for r in rows.values()),
           "verified": sum(bool(r.get("verified")) for r in rows.values()), "timed": len(timed),
           "geomean_vs_eager": geomean([r["vs_eager"] for r in timed]),
           "geomean_vs_compile": geomean([r["vs_compile"] for r in timed]),
           "at_least_eager": sum(r["vs_eager"] >= 1.0 for r in timed)}
    for family in ("Gemm", "Matmul", "Conv2d", "Conv3d", "ConvTranspose2d", "ConvTranspose3d", "BMM"):
        sel = [r for r in timed if f"_{family}_" in r["problem"] or r["problem"].split("_", 1)[1].startswith(family)]
        if sel:
            out[f"{family}_vs_eager"] = geomean([r["vs_eager"] for r in sel])
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--workers", type=int, default=14)
    ap.add_argument("--timing-workers", type=int, default=8)
    ap.add_argument("--lower-deadline", type=float, default=290.0, help="seconds from start for phase A")
    ap.add_argument("--deadline", type=float, default=440.0, help="seconds from start for everything")
    ap.add_argument("--problem-timeout", type=float, default=240.0)
    ap.add_argument("--budget-ms", type=float, default=300.0, help="timing budget per comparison")
    ap.add_argument("--only", default=None)
    ap.add_argument("--lowerings", type=Path, default=None, help="recorded lowerings to package instead")
    ap.add_argument("--specs", type=Path, default=None, help="directory of <stem>.yaml specs (small shapes)")
    a = ap.parse_args()
    from benchmarks.lower_dump import select

    start = time.monotonic()
    a.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(max(1, (os.cpu_count() or 1) // a.workers)))
    log_fh = (a.out / f"log_{a.dtype}.txt").open("a")

    def log(text: str) -> None:
        print(text, flush=True)
        log_fh.write(text + "\n")
        log_fh.flush()

    files = select(a.problems, a.only)
    recorded = {}
    if a.lowerings:
        with (gzip.open if a.lowerings.suffix == ".gz" else open)(a.lowerings, "rt") as fh:
            for line in fh:
                rec = json.loads(line)
                if rec.get("dtype") == a.dtype:
                    recorded[rec["problem"]] = line
    specs = {f.name: str(a.specs / f"{f.stem}.yaml") for f in files
             if a.specs and (a.specs / f"{f.stem}.yaml").is_file()}
    args = {"dtype": a.dtype, "device": a.device, "workers": a.workers, "timing_workers": a.timing_workers,
            "problem_timeout": a.problem_timeout, "budget_ms": a.budget_ms, "problems": str(a.problems)}
    rows, records, sources = run_phase_a(files, recorded, specs, args, start + a.lower_deadline, log)
    if a.device != "cpu":
        run_phase_b(rows, sources, args, start + a.deadline, log)
    with gzip.open(a.out / f"lowerings_{a.dtype}.jsonl.gz", "at") as fh:
        for line in records.values():
            fh.write(line.strip() + "\n")
    with gzip.open(a.out / f"ports_{a.dtype}.jsonl.gz", "at") as fh:
        for name, source in sources.items():
            fh.write(json.dumps({"problem": name, "source": source}) + "\n")
    summary = summarize(rows)
    summary["wall_s"] = round(time.monotonic() - start, 1)
    (a.out / f"lower_port_{a.dtype}.json").write_text(json.dumps({"summary": summary, "problems": list(rows.values())},
                                                                   indent=1, default=str))
    for row in sorted(rows.values(), key=lambda r: int(r["problem"].split("_")[0])):
        t = f"{row['vs_eager']:5.2f}x eager {row['vs_compile']:5.2f}x compile" if "vs_eager" in row else \
            (row.get("timing_error") or row.get("reason") or "")[:70]
        log(f"{row['problem'][:44]:44s} {'V' if row.get('verified') else '-'} {t}")
    log(json.dumps(summary, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
