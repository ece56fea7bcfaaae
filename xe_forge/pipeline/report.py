"""Run reports: report.json (everything), report.md (for people), report.html (with the waterfall plot,
and the roofline plot of a `--profile` run)."""

from __future__ import annotations

import base64
import html
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from xe_forge.pipeline.analyze import Issue
from xe_forge.pipeline.cover import StageReport
from xe_forge.profile import report as profile_report
from xe_forge.profile.models import ProfileSummary
from xe_forge.verify.models import Finding

if TYPE_CHECKING:
    from xe_forge.pipeline.state import FinalCheck, ForgeState, RunContext

SPEED_UNVERIFIED = "unverified: run `xe-forge bench` on the target GPU"
SPEED_FELL_BACK = "not applicable: the output failed the final check, so the input is returned"


class Usage(BaseModel):
    """LLM requests and what they cost; `cost_usd` is None when a price is unknown (not in LiteLLM's map)."""

    calls: int = Field(0, description="HTTP requests sent plus answers replayed from the cache")
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0

    @classmethod
    def of(cls, calls: list[dict]) -> Usage:
        fresh = [c for c in calls if not c["cached"]]
        unknown = any(c["cost"] is None for c in fresh)
        return cls(calls=len(calls), cached=len(calls) - len(fresh),
                   prompt_tokens=sum(c["prompt_tokens"] for c in calls),
                   completion_tokens=sum(c["completion_tokens"] for c in calls),
                   cost_usd=None if unknown else round(sum(c["cost"] or 0.0 for c in fresh), 6))

    def render(self) -> str:
        cost = "cost unknown (not in LiteLLM's cost map)" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        return (f"{self.calls} calls ({self.cached} replayed from cache), "
                f"{self.prompt_tokens}+{self.completion_tokens} tokens, {cost}")


class LlmUsage(Usage):
    errors: list[str] = Field(default_factory=list)
    by_stage: dict[str, Usage] = Field(default_factory=dict, description="'run' for analysis and planning")
    budget: str | None = None
    stopped: str | None = Field(None, description="why the remaining stages were skipped")


class FinalSummary(BaseModel):
    passed: bool | None = None
    changed: bool | None = None
    fell_back: bool | None = None
    fell_back_to: str | None = None
    failure: str = ""
    findings: list[Finding] = Field(default_factory=list)
    unseen: list[str] = Field(default_factory=list, description="the unseen variants checked")


class RunReport(BaseModel):
    """report.json; report.md and report.html are rendered from it."""

    run_id: str
    status: str
    kernel: str
    reference: str
    reference_is_self: bool
    warning: str | None = None
    device: str
    target: str
    toolchain: str
    engine: str
    variant: str | None = None
    plan: list[str] = Field(default_factory=list)
    issues: list[Issue] = Field(default_factory=list)
    stages: list[StageReport] = Field(default_factory=list)
    final: FinalSummary = Field(default_factory=FinalSummary)
    speedup: float | None = None
    speed: str
    degenerate_reference: list[str] = Field(default_factory=list)
    llm: LlmUsage = Field(default_factory=LlmUsage)
    profile: ProfileSummary | None = Field(None, description="`--profile` runs: each kernel's limiter, steering")
    not_run: list[str] = Field(default_factory=list, description="planned stages skipped (budget spent)")


def build_report(state: ForgeState, ctx: RunContext, status: str) -> RunReport:
    final = state.final
    verdict = final.verdict if final else None
    timing = verdict.timing if verdict else None
    calls = ctx.store.llm_calls(ctx.run_id)
    baseline = state.baseline.correctness if state.baseline else []
    problem = ctx.problem
    return RunReport(
        run_id=ctx.run_id, status=status, kernel=str(problem.kernel.path), reference=str(problem.reference.path),
        reference_is_self=problem.reference_is_self,
        warning=("no reference was found: correctness is relative to the input kernel"
                 if problem.reference_is_self else None),
        device=ctx.evaluator.device.kind, target=ctx.target, toolchain=str(ctx.toolchain), engine=ctx.engine,
        variant=problem.variant, plan=state.plan, issues=state.issues, stages=[o.report() for o in state.outcomes],
        final=FinalSummary(passed=verdict.passed if verdict else None, changed=final.changed if final else None,
                           fell_back=final.fell_back if final else None,
                           fell_back_to=final.fell_back_to if final else None, failure=final.failure if final else "",
                           findings=verdict.findings if verdict else [],
                           unseen=[r.variant for r in verdict.correctness[1:]] if verdict else []),
        speedup=timing.speedup if timing else None,
        speed=_speed(final),
        degenerate_reference=sorted({f for r in baseline for f in r.degenerate}),
        llm=_llm_usage(calls, ctx, state.stopped),
        not_run=[s for s in state.plan if s not in state.done] if state.stopped else [],
        profile=ctx.profiler.summary(state.code) if ctx.profiler else None,
    )


def _speed(final: FinalCheck | None) -> str:
    timing = final.verdict.timing if final else None
    if final is not None and final.fell_back_to == "input":
        return SPEED_FELL_BACK
    if timing is not None:
        return f"{timing.speedup:.3f}x vs input (margin {timing.margin:.1%})"
    return SPEED_UNVERIFIED if final is not None and final.changed else "not measured (CPU)"


def _llm_usage(calls: list[dict], ctx: RunContext, stopped: str | None) -> LlmUsage:
    stages = sorted({c["stage"] or "run" for c in calls}, key=lambda s: (s != "run", s))
    budget = ctx.llm.client.budget if ctx.llm is not None else None
    return LlmUsage(**Usage.of(calls).model_dump(), errors=[c["error"] for c in calls if c["error"]][:10],
                    by_stage={s: Usage.of([c for c in calls if (c["stage"] or "run") == s]) for s in stages},
                    budget=budget.render() if budget else None, stopped=stopped)


def waterfall_png(stages: list[StageReport]) -> bytes | None:
    """Per-stage speedup, cumulative, as a PNG; None when no stage has a measured speedup."""
    measured = [(s.stage, s.speedup or 1.0) for s in stages if s.speed_verified]
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


def render_markdown(report: RunReport) -> str:
    r = report
    lines = [f"# xe-forge run {r.run_id}", "", f"- status: **{r.status}**", f"- kernel: `{r.kernel}`",
             f"- reference: `{r.reference}`" + (" (**the input itself: no reference found**)"
                                                 if r.reference_is_self else ""),
             f"- device: {r.device}, target: {r.target} ({r.toolchain}), engine: {r.engine}",
             f"- speed: {r.speed}", f"- plan: {', '.join(r.plan) or 'nothing to do'}"]
    if r.degenerate_reference:
        lines.append(f"- **degenerate reference**: {'; '.join(r.degenerate_reference)}")
    if r.final.fell_back:
        lines.append(f"- **the last stage's kernel failed the final check** ({_one_line(r.final.failure)[:300]}); "
                     f"the result is {'the input' if r.final.fell_back_to == 'input' else 'the kernel of stage ' + str(r.final.fell_back_to)}")
    if r.llm.calls:
        lines.append(f"- LLM: {r.llm.render()}" + (f"; budget {r.llm.budget}" if r.llm.budget else ""))
    if r.not_run:
        lines.append(f"- **stopped early** ({r.llm.stopped}): not run: {', '.join(r.not_run)}")
    lines += ["", "## Stages", "", "| stage | result | speedup | candidates | LLM | note |", "|---|---|---|---|---|---|"]
    for s in r.stages:
        speed = f"{s.speedup:.3f}x" if s.speed_verified else ("not measured" if s.improved else "-")
        result = ("improved" if s.speed_verified else "changed, verified correct") if s.improved else "kept input"
        usage = r.llm.by_stage.get(s.stage)
        lines.append(f"| {s.stage} | {result} | {speed} | {len(s.candidates)} | {usage.render() if usage else '-'} | "
                     f"{_one_line(s.note)} |")
    lines += ["", "## Candidates", ""]
    for s in r.stages:
        for c in s.candidates:
            mark = "accepted" if c.accepted else ("passed" if c.passed else "rejected")
            lines.append(f"- {s.stage} #{c.iteration} ({c.source}:{c.recipe}) **{mark}**: {_one_line(c.summary)}")
    if r.final.findings:
        lines += ["", "## Final verification findings", ""]
        lines += [f"- [{f.check}] {_one_line(f.message)}" for f in r.final.findings]
    if r.issues:
        lines += ["", "## Issues found", ""]
        lines += [f"- [{i.stage}/{i.kind}] line {i.line}: {i.description}" for i in r.issues]
    lines += profile_report.markdown(r.profile)
    return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    """Verdicts can quote a model's answer: its newlines and code fences would break the Markdown around it."""
    return " ".join((text or "").replace("```", "'''").split())


def render_html(report: RunReport, png: bytes | None, roofline: bytes | None = None) -> str:
    """The Markdown report under the waterfall plot (`png`) and, for `--profile` runs, the roofline plot."""
    md = html.escape(render_markdown(report))
    img = (f'<img alt="per-stage speedup" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
           if png else "<p>No measured per-stage speedups (speed is not measured on the CPU).</p>")
    if roofline:
        img += f'<img alt="roofline" src="data:image/png;base64,{base64.b64encode(roofline).decode()}">'
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>xe-forge {report.run_id}</title></head>"
            f"<body><h1>xe-forge run {html.escape(report.run_id)}</h1>{img}<pre>{md}</pre></body></html>\n")


def write_reports(state: ForgeState, ctx: RunContext, status: str) -> RunReport:
    report = build_report(state, ctx, status)
    (ctx.run_dir / "report.json").write_text(report.model_dump_json(indent=2))
    (ctx.run_dir / "report.md").write_text(render_markdown(report))
    roofline = profile_report.png(report.profile)
    if roofline:
        (ctx.run_dir / "roofline.png").write_bytes(roofline)
    (ctx.run_dir / "report.html").write_text(render_html(report, waterfall_png(report.stages), roofline))
    (ctx.run_dir / "output.py").write_text(state.code)
    return report
