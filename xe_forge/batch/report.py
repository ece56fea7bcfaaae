"""Batch summaries: correctness rate, fast_p, geomean speedups, charts, trajectory export.

fast_p (KernelBench) is the fraction of ALL problems that are correct and faster than eager by more
than p; failures and skips count against it. On the CPU speed is not measured: only fast_0 (the
correctness rate) is reported and the other entries say so.
"""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import Any

from xe_forge.store import RunStore

P_VALUES = (0.0, 0.8, 1.0, 1.5, 2.0)


def _speedup(result: dict[str, Any], key: str) -> float | None:
    t = (result.get("timings") or {}).get(key)
    return float(t["speedup"]) if t else None


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(results: list[dict[str, Any]], *, wall_seconds: float = 0.0, workers: int = 1,
              ran: int | None = None) -> dict[str, Any]:
    """`ran`: problems run by this invocation (a resumed batch also reports the earlier ones) for the rate."""
    n = len(results)
    correct = [r for r in results if r.get("correct")]
    eager = {r["id"]: _speedup(r, "eager") for r in correct}
    measured = any(v is not None for v in eager.values())
    fast_p: dict[str, float | str] = {}
    for p in P_VALUES:
        if p == 0:
            fast_p["0"] = len(correct) / n if n else 0.0
        elif measured:
            fast_p[f"{p:g}"] = sum(1 for r in correct if (eager.get(r["id"]) or 0) > p) / n
        else:
            fast_p[f"{p:g}"] = "not measured (CPU)"
    finished = [r for r in results if r.get("status") not in (None, "running")]
    return {
        "problems": n,
        "correct": len(correct),
        "correctness_rate": len(correct) / n if n else 0.0,
        "fast_p": fast_p,
        "geomean_speedup_vs_eager": geomean([v for v in eager.values() if v]),
        "geomean_speedup_vs_compile": geomean([_speedup(r, "torch.compile") for r in correct
                                               if _speedup(r, "torch.compile")]),
        "geomean_speedup_vs_seed": geomean([_speedup(r, "eager") / _speedup({"timings": r.get("seed_timings")}, "eager")
                                            for r in correct if _speedup(r, "eager") and r.get("seed_timings")]),
        "degenerate": {r["name"]: r["degenerate"] for r in results if r.get("degenerate")},
        "workers": workers,
        "workers_used": sorted({r["worker"] for r in results if r.get("worker") is not None}),
        "wall_seconds": wall_seconds,
        "problems_per_hour": ((len(finished) if ran is None else ran) / (wall_seconds / 3600))
                             if wall_seconds > 0 else None,
        "speed_measured": measured,
        "per_problem": [{"id": r["id"], "name": r["name"], "status": r.get("status"), "reason": r.get("reason", ""),
                         "correct": bool(r.get("correct")), "speedup_vs_eager": _speedup(r, "eager"),
                         "speedup_vs_compile": _speedup(r, "torch.compile"), "worker": r.get("worker"),
                         "attempts": r.get("attempts"), "degenerate": r.get("degenerate", [])} for r in results],
    }


def _charts(summary: dict[str, Any]) -> bytes | None:
    rows = [r for r in summary["per_problem"] if r["speedup_vs_eager"]]
    if not rows:
        return None
    from xe_forge.pipeline.plots import new_figure, to_png

    fig, (a, b) = new_figure(2, (11, 3.6))
    a.bar(range(len(rows)), [r["speedup_vs_eager"] for r in rows],
          color=["tab:green" if r["speedup_vs_eager"] > 1 else "tab:red" for r in rows])
    a.axhline(1.0, color="grey", lw=0.8)
    a.set_xticks(range(len(rows)), [str(r["id"]) for r in rows], fontsize=7)
    a.set_ylabel("speedup vs eager")
    a.set_title("per problem")
    n = summary["problems"]
    ps = [i / 20 for i in range(0, 61)]
    speeds = [r["speedup_vs_eager"] for r in summary["per_problem"] if r["correct"] and r["speedup_vs_eager"]]
    b.plot(ps, [sum(1 for s in speeds if s > p) / n for p in ps])
    b.set_xlabel("p (speedup threshold)")
    b.set_ylabel("fast_p")
    b.set_title("fast_p curve")
    return to_png(fig)


def render_markdown(summary: dict[str, Any]) -> str:
    def fmt(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["# xe-forge batch", "", f"- problems: {summary['problems']}, correct: {summary['correct']} "
             f"({summary['correctness_rate']:.0%})",
             "- fast_p: " + ", ".join(f"p={k}: {fmt(v)}" for k, v in summary["fast_p"].items()),
             f"- geomean speedup over eager (correct, measured): {fmt(summary['geomean_speedup_vs_eager'])}",
             f"- geomean speedup over torch.compile: {fmt(summary['geomean_speedup_vs_compile'])}",
             f"- workers: {summary['workers']} (used: {summary['workers_used']}), wall {summary['wall_seconds']:.0f} s, "
             f"problems/hour: {fmt(summary['problems_per_hour'])}", "",
             "| id | problem | status | correct | vs eager | vs compile | worker | degenerate | reason |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in summary["per_problem"]:
        lines.append(f"| {r['id']} | {r['name']} | {r['status']} | {'yes' if r['correct'] else 'no'} | "
                     f"{fmt(r['speedup_vs_eager']) if r['speedup_vs_eager'] else '-'} | "
                     f"{fmt(r['speedup_vs_compile']) if r['speedup_vs_compile'] else '-'} | {r['worker']} | "
                     f"{'; '.join(r['degenerate'])} | {r['reason'][:120]} |")
    return "\n".join(lines) + "\n"


def write_batch_report(out: Path, summary: dict[str, Any], results: list[dict[str, Any]]) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    md = render_markdown(summary)
    (out / "summary.md").write_text(md)
    png = _charts(summary)
    img = (f'<img alt="speedups" src="data:image/png;base64,{base64.b64encode(png).decode()}">' if png
           else "<p>Speed not measured (CPU run): correctness only.</p>")
    (out / "report.html").write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>xe-forge batch</title>"
                                     f"</head><body>{img}<pre>{html.escape(md)}</pre></body></html>\n")


def export_trajectories(out: Path, target: Path) -> int:
    """Every candidate of every problem run, one JSON object per line; returns the count."""
    count = 0
    with target.open("w") as fh:
        for path in sorted((out / "runs").glob("*/store.sqlite")):
            store = RunStore(path)
            try:
                for row in store.query("SELECT * FROM candidates ORDER BY id"):
                    verdict = json.loads(row["verdict"] or "{}")
                    fh.write(json.dumps({
                        "problem_run": path.parent.name, "run_id": row["run_id"], "stage": row["stage"],
                        "iteration": row["iteration"], "source": row["source"], "recipe": row["recipe"],
                        "prompt_hash": row["prompt_hash"], "code": row["code"], "passed": bool(row["passed"]),
                        "accepted": bool(row["accepted"]), "speedup": row["speedup"], "rationale": row["rationale"],
                        "verdict": verdict}) + "\n")
                    count += 1
            finally:
                store.close()
    return count
