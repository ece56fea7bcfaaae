"""Run reports: report.json (everything), report.md (for people), report.html (with the waterfall plot)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from xe_forge.profile import report as profile_report

SPEED_UNVERIFIED = "unverified: run `xe-forge bench` on the target GPU"


def build_report(state: dict[str, Any], ctx: Any, status: str) -> dict[str, Any]:
    final = state.get("final", {})
    verdict = final.get("verdict", {})
    timing = verdict.get("timing")
    calls = ctx.store.llm_calls(ctx.run_id) if ctx.store else []
    baseline = state.get("baseline", {})
    degenerate = sorted({f for r in baseline.get("correctness", []) for f in r.get("degenerate", [])})
    return {
        "run_id": ctx.run_id,
        "status": status,
        "kernel": str(ctx.problem.kernel.path),
        "reference": str(ctx.problem.reference.path),
        "reference_is_self": ctx.problem.reference_is_self,
        "warning": ("no reference was found: correctness is relative to the input kernel"
                    if ctx.problem.reference_is_self else None),
        "device": ctx.evaluator.device.kind,
        "target": ctx.target,
        "toolchain": str(ctx.toolchain),
        "engine": ctx.engine,
        "variant": ctx.problem.variant,
        "plan": state.get("plan", []),
        "issues": state.get("issues", []),
        "stages": [{k: v for k, v in o.items() if k != "code"} for o in state.get("outcomes", [])],
        "final": {"passed": verdict.get("passed"), "changed": final.get("changed"), "fell_back": final.get("fell_back"),
                  "findings": verdict.get("findings", []), "unseen": [r.get("variant") for r in verdict.get("correctness", [])[1:]]},
        "speedup": timing.get("speedup") if timing else None,
        "speed": (f"{timing['speedup']:.3f}x vs input (margin {timing['margin']:.1%})" if timing else
                  (SPEED_UNVERIFIED if final.get("changed") else "not measured (CPU)")),
        "degenerate_reference": degenerate,
        "llm": {"calls": len(calls), "cached": sum(c["cached"] for c in calls),
                "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
                "completion_tokens": sum(c["completion_tokens"] for c in calls),
                "cost_usd": round(sum(c["cost"] or 0 for c in calls), 6),
                "errors": [c["error"] for c in calls if c["error"]][:10]},
        "profile": profile_report.summary(ctx, state.get("code")),
    }


def waterfall_png(stages: list[dict[str, Any]]) -> bytes | None:
    """Per-stage speedup, cumulative, as a PNG; None when no stage has a measured speedup."""
    measured = [(s["stage"], s.get("speedup") or 1.0) for s in stages if s.get("speed_verified")]
    if not measured:
        return None
    from xe_forge.pipeline.plots import new_figure, to_png

    fig, ax = new_figure()
    level = 1.0
    for i, (_, speedup) in enumerate(measured):
        new = level * speedup
        ax.bar(i, new - level, bottom=level, color="tab:green" if speedup >= 1 else "tab:red")
        ax.text(i, max(new, level), f"{speedup:.2f}x", ha="center", va="bottom", fontsize=8)
        level = new
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(range(len(measured)), [m[0] for m in measured], rotation=30, ha="right")
    ax.set_ylabel("cumulative speedup vs input")
    ax.set_title("per-stage speedup (measured, interleaved)")
    return to_png(fig)


def render_markdown(report: dict[str, Any]) -> str:
    lines = [f"# xe-forge run {report['run_id']}", "",
             f"- status: **{report['status']}**", f"- kernel: `{report['kernel']}`",
             f"- reference: `{report['reference']}`" + (" (**the input itself: no reference found**)"
                                                         if report["reference_is_self"] else ""),
             f"- device: {report['device']}, target: {report['target']} ({report['toolchain']}), engine: {report['engine']}",
             f"- speed: {report['speed']}", f"- plan: {', '.join(report['plan']) or 'nothing to do'}"]
    if report["degenerate_reference"]:
        lines.append(f"- **degenerate reference**: {'; '.join(report['degenerate_reference'])}")
    llm = report["llm"]
    if llm["calls"]:
        lines.append(f"- LLM: {llm['calls']} calls ({llm['cached']} replayed from cache), "
                     f"{llm['prompt_tokens']}+{llm['completion_tokens']} tokens, ${llm['cost_usd']}")
    lines += ["", "## Stages", "", "| stage | result | speedup | candidates | note |", "|---|---|---|---|---|"]
    for s in report["stages"]:
        speed = f"{s['speedup']:.3f}x" if s.get("speed_verified") else ("unverified" if s["improved"] else "-")
        lines.append(f"| {s['stage']} | {'improved' if s['improved'] else 'kept input'} | {speed} | "
                     f"{len(s['candidates'])} | {_one_line(s.get('note', ''))} |")
    lines += ["", "## Candidates", ""]
    for s in report["stages"]:
        for c in s["candidates"]:
            mark = "accepted" if c["accepted"] else ("passed" if c["passed"] else "rejected")
            lines.append(f"- {s['stage']} #{c['iteration']} ({c['source']}:{c['recipe']}) **{mark}**: {_one_line(c['summary'])}")
    if report["final"]["findings"]:
        lines += ["", "## Final verification findings", ""]
        lines += [f"- [{f['check']}] {_one_line(f['message'])}" for f in report["final"]["findings"]]
    if report["issues"]:
        lines += ["", "## Issues found", ""]
        lines += [f"- [{i['stage']}/{i['kind']}] line {i.get('line')}: {i['description']}" for i in report["issues"]]
    lines += profile_report.markdown(report.get("profile"))
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    """Verdicts can quote a model's answer: its newlines and code fences would break the Markdown around it."""
    return " ".join((text or "").replace("```", "'''").split())


def render_html(report: dict[str, Any], png: bytes | None, roofline: bytes | None = None) -> str:
    md = html.escape(render_markdown(report))
    img = (f'<img alt="per-stage speedup" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
           if png else "<p>No measured per-stage speedups (speed is not measured on the CPU).</p>")
    if roofline:
        img += f'<img alt="roofline" src="data:image/png;base64,{base64.b64encode(roofline).decode()}">'
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>xe-forge {report['run_id']}</title></head>"
            f"<body><h1>xe-forge run {html.escape(report['run_id'])}</h1>{img}<pre>{md}</pre></body></html>\n")


def write_reports(state: dict[str, Any], ctx: Any, status: str) -> dict[str, Any]:
    run_dir = Path(ctx.extras["run_dir"])
    report = build_report(state, ctx, status)
    (run_dir / "report.json").write_text(json.dumps(report, indent=2, default=str))
    (run_dir / "report.md").write_text(render_markdown(report))
    roofline = profile_report.png(report.get("profile"))
    if roofline:
        (run_dir / "roofline.png").write_bytes(roofline)
    (run_dir / "report.html").write_text(render_html(report, waterfall_png(report["stages"]), roofline))
    (run_dir / "output.py").write_text(state["code"])
    return report
