"""All of KernelBench level 2, offline, in bounded and resumable device calls: ported, verified, timed.

    python benchmarks/lower_level2_gpu.py PROBLEMS_DIR --out $OUT [--resume-from PREVIOUS_OUT]
        [--dtypes bfloat16,float32] [--deadline 540] [--verify-deadline 400] [--workers 8] [--budget 60]
        [--job-timeout 420] [--only 1-20,37] [--no-compile] [--device cuda]

Every problem (files `<id>_<Ops>.py`, no seed) in every dtype is ported as `xe-forge port` does it
(xe_forge/proposers/lower/service.py): TorchInductor's Triton-only lowering within the autotuning
budget as the fast path for the problem's own shapes, the general Triton path for every other call,
in bf16 through the `bf16` precision policy (the 16-bit contract, docs/VERIFIER.md). Phase A, in
parallel worker processes: lower and verify (static checks, trials, unseen shapes that change batch,
channels, features and image sizes); the verdict says which path served each checked shape. Phase B,
one problem at a time on an otherwise idle GPU: the verified ports timed against eager PyTorch and
default torch.compile by the product's own timing (Evaluator, interleaved, L2 flushed, the noise
margin). Each phase stops at its deadline; what is not reached is left for the next call.

Resumable across device calls: carry the previous call's OUT back (any ignored path of the working
tree) and pass it as --resume-from; finished rows, recorded lowerings and ports are taken over, and
only what is missing runs. Writes under OUT: results.jsonl (one row per problem and dtype),
lowerings.jsonl.gz, ports.jsonl.gz, table.md (dated), log.txt. `--device cpu` runs the same plan
with the general path alone (no lowering, no timing): how the script is tested on a CPU.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import math
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PRECISION = {"bfloat16": "bf16", "float16": "fp16", "float32": "keep"}


def key(row: dict[str, Any]) -> str:
    return f"{row['problem']}|{row['dtype']}"


# ---------------------------------------------------------------- phase A: lower and verify (workers)


def port_job(path: str, dtype: str, prior: str | None, args: dict[str, Any], ev) -> dict[str, Any]:
    """One problem in one dtype: its lowering (recorded, or made now), the port, the verifier's verdict."""
    from xe_forge.errors import EnvError
    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower import service
    from xe_forge.proposers.lower.models import Lowering
    from xe_forge.verify.evaluate import declared_allowance

    started = time.monotonic()
    problem = load_problem(path, path, None, precision=PRECISION[dtype])
    row: dict[str, Any] = {"problem": Path(path).name, "dtype": dtype}
    lowering = None
    if prior is not None:
        lowering = Lowering.model_validate_json(prior)
    elif args["device"] != "cpu":
        try:
            lowering = service.lower_problem(problem, device=args["device"], timeout=args["job_timeout"],
                                             budget_s=args["budget"])
        except EnvError as err:
            row["lower_error"] = err.message
    row.update(lowered=bool(lowering and lowering.ok), compile_s=lowering.compile_s if lowering else None,
               budget_spent=bool(lowering and lowering.budget_spent))
    if lowering is not None and not lowering.ok:
        row["lower_error"] = (lowering.error or "")[:400]
    outcome = service.verify_port(problem, ev, [lowering] if lowering is not None else [],
                                  allow_torch=declared_allowance(problem), unseen=True, time_it=False)
    packaged = outcome.packaged
    row.update(verified=outcome.passed, reason=outcome.reason[:600], paths=outcome.paths,
               path_kernels=packaged.paths if packaged else {}, notes=outcome.notes[:6],
               stage_failed=outcome.verdict.stage_failed if outcome.verdict else None,
               seconds=round(time.monotonic() - started, 1))
    return {"row": row, "lowering": lowering.model_dump_json() if lowering is not None and prior is None else None,
            "port": packaged.source if packaged else None}


def worker(jobs, results, args: dict[str, Any]) -> None:
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", f"/tmp/inductor-cache/{os.getpid()}")
    from xe_forge.verify.evaluate import Evaluator

    with Evaluator(args["device"], timeout=600, trials=3) as ev:
        while (item := jobs.get()) is not None:
            path, dtype, prior = item
            results.put(("start", os.getpid(), path, dtype))
            try:
                done = port_job(path, dtype, prior, args, ev)
            except Exception as exc:  # one problem's crash is its row, the others go on
                done = {"row": {"problem": Path(path).name, "dtype": dtype, "verified": False,
                                "reason": f"{type(exc).__name__}: {str(exc)[:400]}"}, "lowering": None, "port": None}
            results.put(("done", os.getpid(), done))


def phase_a(todo: list[tuple[str, str, str | None]], args: dict[str, Any], deadline: float, state: State) -> None:
    if not todo:
        return
    ctx = mp.get_context("spawn")
    jobs, results = ctx.Queue(), ctx.Queue()
    for item in todo:
        jobs.put(item)
    procs: dict[int, Any] = {}

    def start() -> None:
        proc = ctx.Process(target=worker, args=(jobs, results, args))
        proc.start()
        procs[proc.pid] = proc

    for _ in range(min(args["workers"], len(todo))):
        start()
    running: dict[int, tuple[str, str, float]] = {}
    finished = 0
    while finished < len(todo) and time.monotonic() < deadline:
        try:
            msg = results.get(timeout=2)
        except Exception:
            msg = None
        if msg and msg[0] == "start":
            running[msg[1]] = (msg[2], msg[3], time.monotonic())
        elif msg:
            running.pop(msg[1], None)
            finished += 1
            state.add(msg[2])
        for pid, (path, dtype, since) in list(running.items()):
            if not procs[pid].is_alive() or time.monotonic() - since > args["job_timeout"] + 120:
                procs[pid].kill()
                running.pop(pid)
                finished += 1
                state.add({"row": {"problem": Path(path).name, "dtype": dtype, "verified": False,
                                   "reason": "the worker died or passed the per-problem time limit"}})
                start()
    for _ in procs:
        jobs.put(None)
    for proc in procs.values():
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()


# ---------------------------------------------------------------- phase B: timing, one problem at a time


def phase_b(rows: list[dict[str, Any]], args: dict[str, Any], deadline: float, state: State) -> None:
    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower.models import Packaged
    from xe_forge.verify.evaluate import Evaluator, declared_allowance

    todo = [r for r in rows if r.get("verified") and "eager" not in r and "timing_error" not in r
            and key(r) in state.ports]
    if not todo or args["device"] == "cpu":
        return
    with Evaluator(args["device"], timeout=600, trials=1) as ev:
        for row in todo:
            if time.monotonic() > deadline - 60:
                break
            path = str(Path(args["problems"]) / row["problem"])
            problem = load_problem(path, path, None, precision=PRECISION[row["dtype"]])
            verdict = ev.evaluate(state.ports[key(row)], problem, allow_torch=declared_allowance(problem),
                                  unseen=False, time_it=True, full=False, compile_baseline=args["compile"],
                                  name="timed")
            if not verdict.speed_measured:
                row["timing_error"] = verdict.summary()[:400]
            for name, timing in verdict.timings.items():
                row["compile" if name == "torch.compile" else name] = {
                    "speedup": timing.speedup, "candidate_ms": timing.candidate_ms,
                    "baseline_ms": timing.baseline_ms, "faster": timing.faster, "margin": timing.margin}
            packaged = Packaged(source="", kernels=[], paths=row.get("path_kernels", {}))
            main = verdict.correctness[0].kernels if verdict.correctness else []
            row["timed_path"] = packaged.path_of(main)
            state.log(f"[B] {row['problem'][:44]:44s} {row['dtype']:9s} " + (
                f"{row['eager']['speedup']:.2f}x eager" if "eager" in row else row.get("timing_error", "")[:80])
                + (f", {row['compile']['speedup']:.2f}x compile" if "compile" in row else "")
                + f" ({row['timed_path']})")
            state.save()


# ---------------------------------------------------------------- state, table


class State:
    """Rows, lowerings and ports, taken over from earlier calls and written back after every change."""

    def __init__(self, out: Path, previous: Path | None) -> None:
        self.out = out
        self.rows: dict[str, dict[str, Any]] = {}
        self.lowerings: dict[str, str] = {}
        self.ports: dict[str, str] = {}
        self._log = (out / "log.txt").open("a")
        for folder in [p for p in (previous, out) if p is not None and p.is_dir()]:
            self._read(folder)

    def _read(self, folder: Path) -> None:
        if (folder / "results.jsonl").is_file():
            for line in (folder / "results.jsonl").read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.rows[key(row)] = row
        for name, store in (("lowerings.jsonl.gz", self.lowerings), ("ports.jsonl.gz", self.ports)):
            if (folder / name).is_file():
                with gzip.open(folder / name, "rt") as fh:
                    for line in fh:
                        item = json.loads(line)
                        store[item["key"]] = item["text"]

    def add(self, done: dict[str, Any]) -> None:
        row = done["row"]
        self.rows[key(row)] = row
        if done.get("lowering"):
            self.lowerings[key(row)] = done["lowering"]
        if done.get("port"):
            self.ports[key(row)] = done["port"]
        paths = ", ".join(f"{k}:{v}" for k, v in row.get("paths", {}).items())
        self.log(f"[A] {row['problem'][:44]:44s} {row['dtype']:9s} lowered={row.get('lowered')} "
                 f"verified={row.get('verified')} {paths[:80]} {row.get('reason', '')[:100]}")
        self.save()

    def log(self, text: str) -> None:
        print(text, flush=True)
        self._log.write(text + "\n")
        self._log.flush()

    def save(self) -> None:
        tmp = self.out / "results.jsonl.tmp"
        tmp.write_text("".join(json.dumps(r, default=str) + "\n" for r in sorted(self.rows.values(), key=_order)))
        tmp.replace(self.out / "results.jsonl")
        for name, store in (("lowerings.jsonl.gz", self.lowerings), ("ports.jsonl.gz", self.ports)):
            with gzip.open(self.out / f"{name}.tmp", "wt") as fh:
                for k, text in store.items():
                    fh.write(json.dumps({"key": k, "text": text}) + "\n")
            (self.out / f"{name}.tmp").replace(self.out / name)


def _order(row: dict[str, Any]) -> tuple[int, str]:
    return int(row["problem"].split("_")[0]), row["dtype"]


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def table(rows: list[dict[str, Any]], problems: int, dtypes: list[str]) -> str:
    """The summary per dtype and the row per problem, as markdown."""
    lines = [f"# KernelBench level 2, offline ports ({datetime.date.today().isoformat()})", ""]
    for dtype in dtypes:
        sel = [r for r in rows if r["dtype"] == dtype]
        verified = [r for r in sel if r.get("verified")]
        unseen = [r for r in verified if any(k.startswith("unseen") for k in r.get("paths", {}))]
        timed = [r for r in verified if "eager" in r]
        slower = [r for r in timed if r["eager"]["speedup"] < 1 - r["eager"]["margin"]]
        comp = [r for r in timed if "compile" in r]
        fast1 = sum(r["eager"]["faster"] for r in timed)
        served = [p for r in verified for p in r.get("paths", {}).values()]
        g_e, g_c = geomean([r["eager"]["speedup"] for r in timed]), geomean([r["compile"]["speedup"] for r in comp])
        lines += [f"## {dtype}", "",
                  f"- reached {len(sel)} of {problems}; lowered {sum(bool(r.get('lowered')) for r in sel)} "
                  f"({sum(bool(r.get('budget_spent')) for r in sel)} ran out of the autotuning budget)",
                  f"- verified {len(verified)} of {problems}, {len(unseen)} of them at unseen shapes; checked shapes "
                  f"served by a fast path {sum(p.startswith('fast') for p in served)}, by the general path "
                  f"{served.count('general')}",
                  f"- timed {len(timed)}: geomean {g_e:.3f}x eager" if g_e else f"- timed {len(timed)}",
                  (f"  and {g_c:.3f}x torch.compile over {len(comp)}" if g_c else "  (torch.compile not timed)"),
                  f"- fast_1 vs eager {fast1 / problems:.2f} ({fast1} faster beyond the margin); slower than eager by "
                  f"more than the margin: {len(slower)}"
                  + (f"; fast_1 vs torch.compile {sum(r['compile']['faster'] for r in comp) / problems:.2f}"
                     if comp else ""), ""]
    lines += ["| problem | dtype | lowered | verified | paths (checked shapes) | vs eager | vs compile | timed on | "
              "reason |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=_order):
        paths = ", ".join(sorted(set(r.get("paths", {}).values()))) or "-"
        eager = f"{r['eager']['speedup']:.2f}x" if "eager" in r else "-"
        comp = f"{r['compile']['speedup']:.2f}x" if "compile" in r else "-"
        reason = "" if r.get("verified") else (r.get("reason") or r.get("lower_error") or "")[:90].replace("|", "/")
        lines.append(f"| {r['problem']} | {r['dtype']} | {'yes' if r.get('lowered') else 'no'} | "
                     f"{'yes' if r.get('verified') else 'no'} | {paths} | {eager} | {comp} | "
                     f"{r.get('timed_path', '-')} | {reason} |")
    return "\n".join(lines) + "\n"


def plan(state: State, files: list[Path], dtypes: list[str]) -> list[tuple[str, str, str | None]]:
    """(path, dtype, recorded lowering) to port: rows not taken over, or lost with their worker; dtypes in order."""
    todo = []
    for dtype in dtypes:  # bf16 first: fp32 gets what time is left
        for f in files:
            k = f"{f.name}|{dtype}"
            row = state.rows.get(k)
            if row is None or "verified" not in row or row.get("reason", "").startswith("the worker died"):
                todo.append((str(f), dtype, state.lowerings.get(k)))
    return todo


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problems", type=Path)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "level2-out")))
    ap.add_argument("--resume-from", type=Path, default=None)
    ap.add_argument("--dtypes", default="bfloat16,float32")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--budget", type=float, default=60.0, help="autotuning seconds per lowering")
    ap.add_argument("--job-timeout", type=float, default=420.0, help="seconds for one problem's lowering")
    ap.add_argument("--verify-deadline", type=float, default=400.0, help="seconds from start for phase A")
    ap.add_argument("--deadline", type=float, default=540.0, help="seconds from start for everything")
    ap.add_argument("--only", default=None, help="ids, e.g. 1-20,37")
    ap.add_argument("--no-compile", action="store_true", help="time against eager only")
    a = ap.parse_args()
    from benchmarks.lower_dump import select

    start = time.monotonic()
    a.out.mkdir(parents=True, exist_ok=True)
    state = State(a.out, a.resume_from)
    dtypes = [d.strip() for d in a.dtypes.split(",") if d.strip()]
    files = select(a.problems, a.only)
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(max(1, (os.cpu_count() or 1) // max(1, a.workers))))
    args = {"device": a.device, "workers": a.workers, "budget": a.budget, "job_timeout": a.job_timeout,
            "problems": str(a.problems), "compile": not a.no_compile}
    todo = plan(state, files, dtypes)
    state.log(f"[plan] {len(files)} problems x {len(dtypes)} dtypes: {len(todo)} to port, "
              f"{len(state.rows)} rows taken over")
    phase_a(todo, args, start + a.verify_deadline, state)
    rows = list(state.rows.values())
    phase_b(rows, args, start + a.deadline, state)
    state.save()
    (a.out / "table.md").write_text(table(list(state.rows.values()), len(files), dtypes))
    state.log(f"[done] {time.monotonic() - start:.0f} s; {a.out / 'table.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
