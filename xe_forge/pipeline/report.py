"""Run reports: report.json (RunReport, everything), report.md (for people) and report.html (a page:
verdict, plots, candidates, shapes, timings, the input/output diff), all from one RunReport.

What a report never does: give a number for a speed that was not measured, or leave out a check that
did not run (`not_checked`, and the headline says it: "improved, unseen shapes not checked").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from xe_forge.errors import EnvError, ForgeError
from xe_forge.pipeline.analyze import Issue
from xe_forge.pipeline.cover import StageReport
from xe_forge.pipeline.ratios import Ratio, by_key, ratios_of, repeat_note
from xe_forge.pipeline.status import (
    FAILED,
    INTERRUPTED,
    STOPPED,
    Skipped,
    headline,
    skipped_checks,
    stage_result,
)
from xe_forge.profile import report as profile_report
from xe_forge.profile.models import ProfileSummary
from xe_forge.verify.models import CorrectnessReport, Finding, Timing

if TYPE_CHECKING:
    from xe_forge.pipeline.state import FinalCheck, ForgeState, RunContext

SPEED_NOT_MEASURED = ("not measured: the CPU runs Triton's interpreter (correctness only); "
                      "`xe-forge bench` on the target GPU measures it")
SPEED_FELL_BACK = "not applicable: the output failed the final check, so the input is returned"
UNCHANGED = "unchanged: the output is the input"


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


class ShapeResult(BaseModel):
    """One shape of the final verification: the variant itself, then each unseen shape."""

    name: str
    unseen: bool
    passed: bool
    dtype: str
    rtol: float
    atol: float
    calls: int
    calls_passed: int
    max_abs_err: float | None = None
    launches: int = 0
    ghost_changed: bool | None = None
    findings: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, report: CorrectnessReport, unseen: bool) -> ShapeResult:
        errs = [c.max_abs_err for t in report.trials for c in t.comparisons if c.max_abs_err is not None]
        name = report.variant
        if unseen and report.dims:  # the user sees which sizes were checked (proposers never do)
            name += " " + " ".join(f"{k}={v}" for k, v in report.dims.items())
        return cls(name=name, unseen=unseen, passed=report.passed, dtype=report.dtype, rtol=report.rtol,
                   atol=report.atol, calls=len(report.trials), calls_passed=sum(t.passed for t in report.trials),
                   max_abs_err=max(errs) if errs else None, launches=report.launches,
                   ghost_changed=report.ghost_changed,
                   findings=[f.render() for f in report.findings + [f for t in report.trials for f in t.findings]])


class FinalSummary(BaseModel):
    passed: bool | None = None
    changed: bool | None = None
    fell_back: bool | None = None
    fell_back_to: str | None = None
    failure: str = ""
    findings: list[Finding] = Field(default_factory=list)
    unseen: list[str] = Field(default_factory=list, description="the unseen variants checked")
    shapes: list[ShapeResult] = Field(default_factory=list, description="every shape the final verdict checked")
    notes: list[str] = Field(default_factory=list, description="what the verifier wants the user to know")


class RunReport(BaseModel):
    """report.json; report.md and report.html are rendered from it."""

    run_id: str
    status: str
    headline: str = Field("", description="the status with every check that did not run")
    not_checked: list[Skipped] = Field(default_factory=list)
    error: str | None = Field(None, description="why the run stopped, when it failed before its report node")
    kernel: str
    reference: str = ""
    reference_is_self: bool = False
    warning: str | None = None
    device: str = "unknown"
    target: str = "unknown"
    toolchain: str = "unknown"
    worker_environment: dict[str, str] = Field(default_factory=dict, description="variables the device set in "
                                               "every verification worker (the output kernel needs them too)")
    engine: str = "unknown"
    variant: str | None = None
    plan: list[str] = Field(default_factory=list)
    issues: list[Issue] = Field(default_factory=list)
    stages: list[StageReport] = Field(default_factory=list)
    final: FinalSummary = Field(default_factory=FinalSummary)
    speedup: float | None = Field(None, description="output vs input kernel, measured; None when not measured "
                                  "or when the output is the input")
    speed: str = "not measured"
    unchanged: bool = Field(False, description="the run kept its input: the ratios time the input")
    ratios: list[Ratio] = Field(default_factory=list, description="every timed ratio, both sides named: output "
                                "(or the unchanged input) vs input kernel, eager PyTorch, torch.compile, the "
                                "Triton-only lowering")
    timings: dict[str, Timing] = Field(default_factory=dict, description="the ratios' timings by baseline key "
                                       "('input kernel', 'eager', 'torch.compile', 'lowering'); `ratios` names "
                                       "what was timed against each")
    device_toolchain: str = Field("unknown", description="the Triton installed where the run ran (the CPU: the "
                                  "interpreter's)")
    degenerate_reference: list[str] = Field(default_factory=list)
    llm: LlmUsage = Field(default_factory=LlmUsage)
    profile: ProfileSummary | None = Field(None, description="`--profile` runs: each kernel's limiter, steering")
    not_run: list[str] = Field(default_factory=list, description="planned stages skipped (budget spent)")

    def speed_lines(self) -> list[str]:
        """One line per timed ratio, both sides named ('output vs eager PyTorch: 1.840x, faster (...)'),
        or why nothing was measured; an unchanged run says so first."""
        lines = [r.line() for r in self.ratios] or [self.speed]
        return [UNCHANGED] + lines if self.unchanged and not self.speed.startswith(UNCHANGED) else lines

    def platform(self) -> str:
        """Where the run ran and what it prepared for, naming the toolchain actually installed."""
        if self.device == "cpu":
            assumed = "" if self.toolchain in ("unknown", self.device_toolchain) else (
                f"; launch options checked for {self.toolchain}, the toolchain assumed there")
            return (f"cpu: the interpreter of {self.device_toolchain} (correctness only), preparing for target "
                    f"{self.target}{assumed}")
        installed = self.device_toolchain if self.device_toolchain != "unknown" else self.toolchain
        return f"{self.device} ({installed}), target {self.target}"


def _speed(final: FinalCheck | None, measures_speed: bool, ratios: list[Ratio]) -> str:
    if final is not None and final.fell_back_to == "input":
        return SPEED_FELL_BACK
    if ratios:
        return "; ".join(f"{r.label}: {r.timing.speedup:.3f}x" for r in ratios)
    if not measures_speed:
        return SPEED_NOT_MEASURED if final is None or final.changed else f"{UNCHANGED}; speed {SPEED_NOT_MEASURED}"
    return UNCHANGED if not (final and final.changed) else "not measured"


def _ratios(final: FinalCheck | None) -> list[Ratio]:
    """What was timed, as timed: the output against the input (the final check), PyTorch and the lowering;
    an unchanged input only against PyTorch (the final check did not time it against itself)."""
    if final is None or not final.verdict.passed or final.fell_back_to == "input":
        return []
    if not final.changed:
        return ratios_of(final.versus, "input", "final check")
    own = {k: t for k, t in final.verdict.timings.items() if k == "input kernel"}
    return ratios_of(own, "output", "final check") + ratios_of(final.versus, "output", "final check")


def build_report(state: ForgeState, ctx: RunContext, status: str) -> RunReport:
    final = state.final
    verdict = final.verdict if final else None
    changed = bool(final and final.changed)
    calls = ctx.store.llm_calls(ctx.run_id)
    baseline = state.baseline.correctness if state.baseline else []
    problem = ctx.problem
    measures = ctx.evaluator.measures_speed
    skipped = skipped_checks(verdict, problem, speed_requested=changed)
    if final is not None and final.versus_note:
        skipped.append(Skipped(check="pytorch", what="speed vs PyTorch not measured", reason=final.versus_note))
    ratios = _ratios(final)
    unchanged = bool(final and final.verdict.passed and not final.changed)
    return RunReport(
        run_id=ctx.run_id, status=status, headline=headline(status, skipped, unchanged=unchanged),
        not_checked=skipped, unchanged=unchanged, ratios=ratios, timings=by_key(ratios),
        device_toolchain=str(ctx.evaluator.device.toolchain()),
        kernel=str(problem.kernel.path), reference=str(problem.reference.path),
        reference_is_self=problem.reference_is_self,
        warning=("no reference was found: correctness is relative to the input kernel"
                 if problem.reference_is_self else None),
        device=ctx.evaluator.device.kind, target=ctx.target, toolchain=str(ctx.toolchain), engine=ctx.engine,
        worker_environment=ctx.evaluator.device.worker_environment(),
        variant=problem.variant, plan=state.plan, issues=state.issues, stages=[o.report() for o in state.outcomes],
        final=FinalSummary(passed=verdict.passed if verdict else None, changed=final.changed if final else None,
                           fell_back=final.fell_back if final else None,
                           fell_back_to=final.fell_back_to if final else None, failure=final.failure if final else "",
                           findings=verdict.findings if verdict else [],
                           unseen=[r.variant for r in verdict.correctness[1:]] if verdict else [],
                           shapes=[ShapeResult.of(r, i > 0) for i, r in enumerate(verdict.correctness)]
                           if verdict else [],
                           notes=list(getattr(verdict, "notes", []) or [])),  # verifier v2 fills `notes`
        speedup=next((r.timing.speedup for r in ratios if r.baseline == "input kernel"), None),
        speed=_speed(final, measures, ratios),
        degenerate_reference=sorted({f for r in baseline for f in r.degenerate}),
        llm=_llm_usage(calls, ctx, state.stopped),
        not_run=[s for s in state.plan if s not in state.done] if state.stopped else [],
        profile=ctx.profiler.summary(state.code) if ctx.profiler else None,
    )


def failure_report(run_id: str, kernel: str, error: BaseException, continue_with: str, *, reference: str = "",
                   reference_is_self: bool = False, device: str = "unknown", target: str = "unknown",
                   engine: str = "unknown", toolchain: str = "unknown", device_toolchain: str = "unknown") -> RunReport:
    """The report of a run that stopped before its report node (Ctrl-C, the environment, bad input found
    late, a crash); `continue_with` is the command that resumes it."""
    if isinstance(error, KeyboardInterrupt):
        status, message = INTERRUPTED, f"interrupted: `{continue_with}` continues the run"
    elif isinstance(error, EnvError):
        status, message = STOPPED, f"{error.message}; once fixed, `{continue_with}` continues the run"
    else:
        status = FAILED
        message = str(error) if isinstance(error, ForgeError) else f"{type(error).__name__}: {error}"
    return RunReport(run_id=run_id, status=status, headline=f"{status}: {message.splitlines()[0]}", error=message,
                     kernel=kernel, reference=reference, reference_is_self=reference_is_self, device=device,
                     target=target, engine=engine, toolchain=toolchain, device_toolchain=device_toolchain,
                     speed="not measured: the run did not finish")


def _llm_usage(calls: list[dict], ctx: RunContext, stopped: str | None) -> LlmUsage:
    stages = sorted({c["stage"] or "run" for c in calls}, key=lambda s: (s != "run", s))
    budget = ctx.llm.client.budget if ctx.llm is not None else None
    return LlmUsage(**Usage.of(calls).model_dump(), errors=[c["error"] for c in calls if c["error"]][:10],
                    by_stage={s: Usage.of([c for c in calls if (c["stage"] or "run") == s]) for s in stages},
                    budget=budget.render() if budget else None, stopped=stopped)


def waterfall_png(stages: list[StageReport]) -> bytes | None:
    """Per-stage speedup, cumulative, as a PNG; None when no stage has a measured speedup."""
    measured = [(s.stage, s.speedup) for s in stages if s.speed_verified and s.speedup]
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
    ax.set_ylabel("output vs input kernel (product of the stages' ratios)")
    ax.set_title("each stage's kernel vs the stage's input kernel (interleaved)")
    return to_png(fig)


def stage_speed(s: StageReport) -> str:
    if s.speed_verified and s.speedup:
        return f"{s.speedup:.3f}x"
    return "not measured" if s.improved else "-"


def stage_outcome(s: StageReport) -> str:
    return stage_result(s.improved, s.speed_verified)


def render_markdown(report: RunReport) -> str:
    r = report
    lines = [f"# xe-forge run {r.run_id}", "", f"- status: **{r.headline or r.status}**"]
    if r.error:
        lines.append(f"- error: {_one_line(r.error)}")
    lines += [f"- kernel: `{r.kernel}`",
              f"- reference: `{r.reference}`" + (" (**the input itself: no reference found**)"
                                                  if r.reference_is_self else ""),
              f"- ran on: {r.platform()}; engine: {r.engine}",
              *([f"- worker environment: {', '.join(f'`{k}={v}`' for k, v in r.worker_environment.items())} "
                 "(set in every verification worker: run the output kernel with it too)"]
                if r.worker_environment else []),
              *[f"- speed: {line}" for line in r.speed_lines()],
              *([f"- {repeat_note('output.py')} (the output.py beside this report)"] if r.ratios else []),
              f"- plan: {', '.join(r.plan) or 'nothing to do'}"]
    if r.degenerate_reference:
        lines.append(f"- **degenerate reference**: {'; '.join(r.degenerate_reference)}")
    if r.final.fell_back:
        lines.append(f"- **the last stage's kernel failed the final check** ({_one_line(r.final.failure)[:300]}); "
                     f"the result is {'the input' if r.final.fell_back_to == 'input' else 'the kernel of stage ' + str(r.final.fell_back_to)}")
    if r.llm.calls:
        lines.append(f"- LLM: {r.llm.render()}" + (f"; budget {r.llm.budget}" if r.llm.budget else ""))
    if r.not_run:
        lines.append(f"- **stopped early** ({r.llm.stopped}): not run: {', '.join(r.not_run)}")
    if r.not_checked:
        lines += ["", "## Not checked", ""] + [f"- **{s.what}**: {s.reason}" for s in r.not_checked]
    lines += ["", "## Stages", "", "| stage | result | speedup vs the stage's input | candidates | LLM | note |", "|---|---|---|---|---|---|"]
    for s in r.stages:
        usage = r.llm.by_stage.get(s.stage)
        lines.append(f"| {s.stage} | {stage_outcome(s)} | {stage_speed(s)} | {len(s.candidates)} | "
                     f"{usage.render() if usage else '-'} | {_one_line(s.note)} |")
    lines += ["", "## Candidates", ""]
    for s in r.stages:
        for c in s.candidates:
            mark = "accepted" if c.accepted else ("passed" if c.passed else "rejected")
            why = f": {_one_line(c.summary)}" if not c.passed else ""
            took = f" ({c.seconds:.1f} s to verify)" if c.seconds else ""
            lines.append(f"- {s.stage} #{c.iteration} ({c.source}:{c.recipe}) **{mark}**{took}{why}")
    if r.final.shapes:
        lines += ["", "## Final verification: shapes", "", "| shape | unseen | result | calls passed | max abs err | "
                  "tolerance | launches | ghost replay |", "|---|---|---|---|---|---|---|---|"]
        for sh in r.final.shapes:
            err = f"{sh.max_abs_err:.2e}" if sh.max_abs_err is not None else "-"
            ghost = {True: "output changed", False: "output unchanged", None: "not run"}[sh.ghost_changed]
            lines.append(f"| {_one_line(sh.name)} | {'yes' if sh.unseen else 'no'} | "
                         f"{'pass' if sh.passed else 'FAIL'} | {sh.calls_passed}/{sh.calls} | {err} | "
                         f"rtol {sh.rtol:g}, atol {sh.atol:g} ({sh.dtype}) | {sh.launches} | {ghost} |")
    lines += [f"- note: {_one_line(n)}" for n in r.final.notes]
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
    return " ".join((text or "").replace("```", "'''").replace("|", "/").split())


def render_html(report: RunReport, png: bytes | None = None, roofline: bytes | None = None, *,
                input_code: str = "", output_code: str = "") -> str:
    """The report page: verdict, plots (the waterfall `png`, the roofline), tables, and the kernel diff."""
    from xe_forge.pipeline.html import data_uri, render_page, side_by_side

    return render_page("run.html.j2", r=report, waterfall=data_uri(png), roofline=data_uri(roofline),
                       stage_speed=stage_speed, stage_result=stage_outcome,
                       diff=side_by_side(input_code, output_code, "input.py", "output.py")
                       if input_code and output_code else None)


def write_report_files(run_dir: Path, report: RunReport, *, input_code: str = "", output_code: str = "") -> None:
    (run_dir / "report.json").write_text(report.model_dump_json(indent=2))
    (run_dir / "report.md").write_text(render_markdown(report))
    roofline = profile_report.png(report.profile)
    if roofline:
        (run_dir / "roofline.png").write_bytes(roofline)
    (run_dir / "report.html").write_text(render_html(report, waterfall_png(report.stages), roofline,
                                                     input_code=input_code, output_code=output_code))


def write_reports(state: ForgeState, ctx: RunContext, status: str) -> RunReport:
    report = build_report(state, ctx, status)
    write_report_files(ctx.run_dir, report, input_code=state.input_code, output_code=state.code)
    (ctx.run_dir / "output.py").write_text(state.code)
    return report
