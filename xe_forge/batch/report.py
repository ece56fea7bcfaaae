"""Batch summaries: correctness rate, fast_p, geomean speedups, charts, trajectory export.

fast_p (KernelBench) is the fraction of ALL problems that are correct and faster than eager by more
than p; failures and skips count against it. On the CPU speed is not measured: only fast_0 (the
correctness rate) is reported and the other entries say so. A problem whose reference the verifier
flags as degenerate (constant or near-zero output at some weights) is correct or not like any other,
but its speedup counts toward fast_p (p > 0) only with `count_degenerate`: a kernel can be fast there
for reasons that say nothing about the kernel.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from xe_forge.pipeline.ratios import ratio_label, repeat_note
from xe_forge.store import RunStore
from xe_forge.verify.models import baseline_name

P_VALUES = (0.0, 0.8, 1.0, 1.5, 2.0)
NOT_MEASURED = "not measured: the CPU runs Triton's interpreter (correctness only)"
SEED_KEY = "input kernel"  # the run's own interleaved timing of its output against the seed it started from


def problem_ratios(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A problem's timed ratios by baseline key, each with both sides named as `Ratio.label` names them
    ('output vs eager PyTorch', 'input kernel (unchanged) vs eager PyTorch'). A result stored without
    `ratios` (an older batch resumed) has its subject from `unchanged`."""
    stored = result.get("ratios")
    if stored is None:
        subject = "input" if result.get("unchanged") else "output"
        stored = [{"subject": subject, "baseline": k, "timing": t} for k, t in (result.get("timings") or {}).items()]
    return {r["baseline"]: {"subject": r["subject"], "label": ratio_label(r["subject"], r["baseline"]),
                            "speedup": float(r["timing"]["speedup"])} for r in stored}


def _speedup(result: dict[str, Any], key: str) -> float | None:
    ratio = problem_ratios(result).get(key)
    return ratio["speedup"] if ratio else None


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(results: list[dict[str, Any]], *, wall_seconds: float = 0.0, workers: int = 1,
              ran: int | None = None, interrupted: bool = False, count_degenerate: bool = False) -> dict[str, Any]:
    """`ran`: problems run by this invocation (a resumed batch also reports the earlier ones) for the rate.
    `interrupted`: the batch was stopped (Ctrl-C); the figures are over what finished, the rest is listed.
    `count_degenerate`: let speedups on degenerate problems count toward fast_p (p > 0)."""
    n = len(results)
    correct = [r for r in results if r.get("correct")]
    eager = {r["id"]: _speedup(r, "eager") for r in correct}
    measured = any(v is not None for v in eager.values())
    scored = [r for r in correct if count_degenerate or not r.get("degenerate")]
    fast_p: dict[str, float | str] = {}
    for p in P_VALUES:
        if p == 0:
            fast_p["0"] = len(correct) / n if n else 0.0
        elif measured:
            fast_p[f"{p:g}"] = sum(1 for r in scored if (eager.get(r["id"]) or 0) > p) / n
        else:  # kept as text in summary.json; the printed figures leave it out (_fast_p_line)
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
        "geomean_speedup_vs_seed": geomean([_speedup(r, SEED_KEY) for r in correct if _speedup(r, SEED_KEY)]),
        "degenerate": {r["name"]: r["degenerate"] for r in results if r.get("degenerate")},
        "degenerate_in_fast_p": count_degenerate,
        "workers": workers,
        "workers_used": sorted({r["worker"] for r in results if r.get("worker") is not None}),
        "wall_seconds": wall_seconds,
        "problems_per_hour": ((len(finished) if ran is None else ran) / (wall_seconds / 3600))
                             if wall_seconds > 0 else None,
        "speed_measured": measured,
        "interrupted": interrupted,
        "unfinished": [r["name"] for r in results if r.get("status") in (None, "running")],
        "per_problem": [{"id": r["id"], "name": r["name"], "status": r.get("status"), "reason": r.get("reason", ""),
                         "run_id": r.get("run_id"),
                         "correct": bool(r.get("correct")), "speedup_vs_eager": _speedup(r, "eager"),
                         "speedup_vs_compile": _speedup(r, "torch.compile"), "speedup_vs_seed": _speedup(r, SEED_KEY),
                         "unchanged": bool(r.get("unchanged")), "ratios": problem_ratios(r), "worker": r.get("worker"),
                         "attempts": r.get("attempts"), "degenerate": r.get("degenerate", []),
                         "not_checked": r.get("not_checked", []), "ported_by": r.get("ported_by")}
                        for r in results],
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


def _geomean_text(summary: dict[str, Any], key: str, absent: str) -> str:
    """A geomean, or why there is none: never a raw None."""
    value = summary[key]
    if value is not None:
        return f"{value:.3f}x"
    return NOT_MEASURED if not summary["speed_measured"] else absent


def _degenerate_note(s: dict[str, Any]) -> str:
    if not s.get("degenerate"):
        return ""
    how = "counted (--count-degenerate)" if s.get("degenerate_in_fast_p") else "not counted above p=0"
    return f" ({len(s['degenerate'])} degenerate problem(s): their speedups {how})"


def _fast_p_line(s: dict[str, Any]) -> str:
    """fast_p where speed was measured; on the CPU only its p = 0 entry exists (the correctness rate), said so."""
    if not s["speed_measured"]:
        return f"fast_p (output vs eager PyTorch): {NOT_MEASURED}; fast_0 = the correctness rate above"
    return ("fast_p (correct and output faster than eager PyTorch by more than p): "
            + ", ".join(f"p={k}: {v:.3f}" for k, v in s["fast_p"].items()) + _degenerate_note(s))


def _workers_line(s: dict[str, Any]) -> str:
    used = len(s["workers_used"])
    ran = f"{used} of them ran a problem" if used != s["workers"] else ("it ran the problems" if used == 1
                                                                       else "all ran problems")
    rate = f"{s['problems_per_hour']:.1f}" if s["problems_per_hour"] is not None else "-"
    return (f"workers: {s['workers']} ({ran if used else 'none ran a problem'}), wall {s['wall_seconds']:.0f} s, "
            f"problems/hour: {rate}")


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """The figures a batch is judged by, one per line, as the console, summary.md and report.html show them."""
    s = summary
    lines = [f"problems: {s['problems']}, correct: {s['correct']} ({s['correctness_rate']:.0%})", _fast_p_line(s),
             f"geomean, output vs eager PyTorch (correct problems, timed): "
             f"{_geomean_text(s, 'geomean_speedup_vs_eager', 'no correct problem was timed')}",
             f"geomean, output vs torch.compile (default): "
             f"{_geomean_text(s, 'geomean_speedup_vs_compile', 'not timed (torch.compile failed on every problem)')}",
             f"geomean, output vs its seed (the input kernel of each run; the Triton-only lowering where a problem "
             f"had no seed; problems that kept their seed left out): "
             f"{_geomean_text(s, 'geomean_speedup_vs_seed', 'no changed output was timed against its seed')}",
             _workers_line(s)]
    if s["speed_measured"]:
        lines.insert(5, f"{repeat_note('runs/<run id>/output.py')} (a problem's run under the batch's --out)")
    if s.get("interrupted"):
        lines.append(f"INTERRUPTED: {len(s['unfinished'])} problem(s) not finished "
                     f"({', '.join(s['unfinished'][:10]) or 'none'}); `--resume` continues the batch")
    return lines


PORTED_BY = {"lower": "TorchInductor lowering", "general": "general path", "llm": "LLM"}


def ported_by(r: dict[str, Any]) -> str:
    """Who made the seed of a problem that had none (batch/port.py); '-' where a seed was given."""
    return PORTED_BY.get(r.get("ported_by") or "", "-")


def not_checked(r: dict[str, Any]) -> str:
    """The checks a problem's run did not run (speed included where it was not measured)."""
    return ", ".join(r["not_checked"]) or "-"


def speed_cell(r: dict[str, Any], key: str) -> str:
    """One ratio of a problem (`key`: its baseline, as `Verdict.timings` names it): the figure, and the timed
    kernel's name where it is not the output (a run that kept its input)."""
    ratio = r["ratios"].get(key)
    if not ratio:
        return "-"
    figure = f"{ratio['speedup']:.3f}x"
    return figure if ratio["subject"] == "output" else f"{figure} ({ratio['label']})"


RATIOS_TIMED = "the output timed against each; a run that kept its input says so in the cell"
# the ratio columns: the output (or the input a run kept, so named in the cell) timed against each baseline
RATIO_KEYS = ("eager", "torch.compile", SEED_KEY)
RATIO_COLUMNS = tuple(f"vs {baseline_name(k) if k != SEED_KEY else 'seed (its input kernel)'}" for k in RATIO_KEYS)
COLUMNS = ("id", "problem", "ported by", "status", "correct", *RATIO_COLUMNS, "worker", "degenerate", "not checked",
           "reason")


def problem_rows(summary: dict[str, Any]) -> list[list[str]]:
    """One row of cells per problem, as COLUMNS names them (summary.md, the terminal table)."""
    rows = []
    for r in summary["per_problem"]:
        reason = " ".join(r["reason"][:120].split())
        rows.append([str(r["id"]), r["name"], ported_by(r), r["status"] or "not started", "yes" if r["correct"] else "no",
                     *(speed_cell(r, key) for key in RATIO_KEYS), "-" if r["worker"] is None else str(r["worker"]),
                     "; ".join(r["degenerate"]) or "-", not_checked(r), reason or "-"])
    return rows


def render_markdown(summary: dict[str, Any]) -> str:
    lines = ["# xe-forge batch", ""] + [f"- {line}" for line in headline_lines(summary)] + [
        "", f"Ratios per problem: {RATIOS_TIMED}.", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in row) + " |" for row in problem_rows(summary)]
    return "\n".join(lines) + "\n"


def render_table(summary: dict[str, Any]):
    """The per-problem table for a terminal (rich): seven columns that fold within its width, where the raw
    Markdown would wrap into an unreadable block at 80 columns; the rest of a row goes to its last cell."""
    from rich.table import Table

    table = Table(title=f"problems (ratios: {RATIOS_TIMED})")
    for column, ratio in (("id", 0), ("problem", 3), ("status", 2), ("vs eager", 1), ("vs compile", 1),
                          ("vs seed", 1), ("not checked; why", 3)):
        table.add_column(column, overflow="fold", ratio=ratio or None, no_wrap=not ratio)
    for row in problem_rows(summary):
        notes = [x for x in (row[10], row[11]) if x != "-"]
        notes += [f"degenerate: {row[9]}"] if row[9] != "-" else []
        name = row[1] + (f" (seed: {row[2]})" if row[2] != "-" else "")
        table.add_row(row[0], name, row[3], row[5], row[6], row[7], "; ".join(notes) or "-")
    return table


def render_html(out: Path, summary: dict[str, Any]) -> str:
    """The batch page (same layout as a run's): figures, the fast_p curve, one row per problem with a link
    to its run's report."""
    from xe_forge.pipeline.html import data_uri, render_page

    links = {r["id"]: f"runs/{r['run_id']}/report.html" for r in summary["per_problem"]
             if r.get("run_id") and (out / "runs" / r["run_id"] / "report.html").is_file()}
    return render_page("batch.html.j2", s=summary, lines=headline_lines(summary), links=links,
                       chart=data_uri(_charts(summary)), ported_by=ported_by,
                       not_checked=not_checked, speed_cell=speed_cell, ratio_keys=RATIO_KEYS,
                       ratio_columns=RATIO_COLUMNS, ratios_timed=RATIOS_TIMED)


def write_batch_report(out: Path, summary: dict[str, Any], results: list[dict[str, Any]]) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    (out / "summary.md").write_text(render_markdown(summary))
    (out / "report.html").write_text(render_html(out, summary))


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
