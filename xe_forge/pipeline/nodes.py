"""The graph's nodes: baseline, analyze, plan, one CoVeR node per stage, final_verify, report.

Each stage node is the same CoVeR function with a different stages/*.yaml.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.runtime import Runtime

from xe_forge.errors import InputError
from xe_forge.pipeline.analyze import Issue, analyze_source, stages_with_issues
from xe_forge.pipeline.cover import CandidateRecord, recorder, run_stage
from xe_forge.pipeline.progress import RAISE_TIMEOUT
from xe_forge.pipeline.state import FinalCheck, ForgeState, RunContext
from xe_forge.pipeline.status import (
    CORRECT_UNTIMED,
    FINAL_FAILED,
    IMPROVED,
    NO_IMPROVEMENT,
    NO_MEASURED_IMPROVEMENT,
    timed_out,
)
from xe_forge.problem.roofline import problem_facts
from xe_forge.profile import session as profile_hooks
from xe_forge.prompting import render
from xe_forge.proposers.base import Proposal, Proposer, StageRequest
from xe_forge.stages import StageSpec, order_with_dependencies
from xe_forge.verify.models import Timing, Verdict

Update = dict[str, object]  # a node returns only the ForgeState fields it changes


def baseline_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
    """The input kernel must pass against its reference, or there is nothing to optimize (exit 2)."""
    ctx = runtime.context
    ctx.progress.phase("baseline", "checking the input kernel against its reference")
    verdict = ctx.evaluator.evaluate(state.input_code, ctx.problem, allow_torch=ctx.allowance, name="input")
    if not verdict.passed:
        reasons = "; ".join(f.render() for f in verdict.findings[:3]) or verdict.summary()
        raise InputError(f"the input kernel fails against its reference: {reasons}",
                         hint=f"its check was killed at {ctx.evaluator.timeout:g} s: {RAISE_TIMEOUT}"
                         if timed_out(verdict) else "xe-forge optimizes correct kernels; `xe-forge check` shows the full verdict")
    profile_hooks.on_input(ctx, state.input_code)
    return {"baseline": verdict}


def analyze_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
    ctx = runtime.context
    ctx.progress.phase("analyze", "looking for issues")
    issues = analyze_source(state.code)
    if ctx.llm is not None:
        task = render("analyze.j2", target=ctx.target, toolchain=str(ctx.toolchain), stages=list(ctx.stages.values()),
                      known=issues, context=problem_facts(ctx.problem, ctx.target).render(), code=state.code,
                      reference=ctx.problem.reference.source)
        analysis = ctx.llm.analyze(task)
        if analysis.problem:
            ctx.progress.phase("analyze", f"the LLM's analysis: {analysis.problem}; the static issues stand")
        found = [i for i in analysis.issues if i.stage in ctx.stages]
        issues += [i for i in found if (i.stage, i.kind) not in {(j.stage, j.kind) for j in issues}]
    ctx.progress.issues(issues)
    return {"issues": issues}


def plan_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
    """Order and skips; the user's --stages wins; hard dependencies are always respected."""
    ctx = runtime.context
    issues = state.issues
    if ctx.only_stages:
        plan = list(ctx.only_stages)
    else:
        plan = [s for s in ctx.stages if s in stages_with_issues(issues) and _can_serve(ctx, s)]
        if ctx.llm is not None:
            task = render("plan.j2", target=ctx.target, stages=list(ctx.stages.values()), issues=issues)
            proposed = ctx.llm.plan(task)
            if proposed:
                plan = [s for s in proposed if s in ctx.stages] or plan
            plan += [s.name for s in ctx.stages.values() if s.open_ended and s.name not in plan]
    plan = profile_hooks.steer_planned(ctx, plan, state.code, lambda s: _can_serve(ctx, s))
    plan = order_with_dependencies(plan, ctx.stages)
    ctx.progress.plan(plan)
    return {"plan": plan, **_budget_stop(ctx)}


def _budget_stop(ctx: RunContext) -> Update:
    """{'stopped': why} once the LLM budget is spent: the router then skips to final_verify."""
    reason = ctx.llm.client.budget_spent() if ctx.llm is not None else None
    if reason:
        ctx.progress.phase("budget", f"{reason}: the remaining stages are skipped")
    return {"stopped": reason} if reason else {}


def _can_serve(ctx: RunContext, stage: str) -> bool:
    """In rules mode a stage runs only if it has recipes or a candidate source; the LLM can serve any stage."""
    spec = ctx.stages[stage]
    return (ctx.llm is not None or bool(spec.recipes)
            or any(s in ctx.sources and ctx.sources[s].available() for s in spec.sources))


def make_stage_node(name: str) -> Callable[[ForgeState, Runtime[RunContext]], Update]:
    def stage_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
        ctx = runtime.context
        spec = ctx.stages[name]
        issues = [i for i in state.issues if i.stage == name]
        ctx.progress.stage_start(name, len(state.done) + 1, len(state.plan))
        ctx.store.stage(ctx.run_id, name, "running")
        knowledge = _knowledge(ctx, spec, issues)
        request = StageRequest(stage=spec, code=state.code, reference=ctx.problem.reference.source, issues=issues,
                               knowledge=knowledge, context=problem_facts(ctx.problem, ctx.target).render(),
                               target=ctx.target, toolchain=str(ctx.toolchain),
                               profile=profile_hooks.stage_feedback(ctx, state.code, name))
        sources = [ctx.sources[s] for s in spec.sources if s in ctx.sources]
        proposers: list[Proposer] = [*sources, ctx.rules] if ctx.llm is None else [*sources, ctx.rules, ctx.llm]
        proposers = profile_hooks.stage_proposers(ctx, state.code, name, proposers)
        record = recorder(ctx.store, ctx.run_id, name)

        def on_candidate(rec: CandidateRecord, proposal: Proposal, verdict: Verdict) -> int:
            ctx.progress.candidate(name, rec)
            return record(rec, proposal, verdict)

        outcome = run_stage(request, ctx.problem, proposers, ctx.evaluator, allowance=ctx.allowance,
                            max_iters=ctx.max_iters, on_candidate=on_candidate)
        skips = ctx.rules.skips.get(name, [])
        if not outcome.candidates and skips:
            outcome.note = "no recipe applied: " + "; ".join(f"{s['recipe']}: {s['reason']}" for s in skips[:4])
        notes = [outcome.note] if outcome.note else []
        outcome.note = "; ".join(notes + [f"{src.source} offered nothing: {src.skip}" for src in sources if src.skip])
        ctx.store.stage(ctx.run_id, name, "improved" if outcome.improved else "kept input",
                        speedup=outcome.speedup, summary=outcome.report().model_dump())
        ctx.progress.stage_done(outcome)
        return {"code": outcome.code, "done": [name], "outcomes": [outcome], **_budget_stop(ctx)}

    stage_node.__name__ = f"stage_{name}"
    return stage_node


def _knowledge(ctx: RunContext, spec: StageSpec, issues: list[Issue]) -> list[str]:
    """The stage's knowledge-base entries, rendered, best first (a prompt that must shrink drops the last)."""
    if ctx.kb is None or ctx.llm is None:
        return []
    from xe_forge.kb import render_entry, retrieve

    query = " ".join([spec.goal] + [i.description for i in issues])
    entries = []
    for kb_stage in spec.kb_stages:
        entries += retrieve(ctx.kb, query, stage=kb_stage, target=ctx.target, toolchain=ctx.toolchain,
                            budget_tokens=ctx.kb_budget // max(1, len(spec.kb_stages)))
    return [render_entry(e) for e in {e.id: e for e in entries}.values()]


def final_verify_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
    """Unseen shapes and a final interleaved timing of output vs input. If the output fails, the latest
    earlier stage's kernel that passes is the result (a late bad candidate costs no earlier win); the
    input only when none does.

    On a GPU the result is also timed against eager PyTorch and torch.compile: "is it faster than what
    I had in PyTorch?" is a user's first question."""
    ctx = runtime.context
    ctx.progress.phase("final_verify", "unseen shapes" + (" and final timing" if ctx.evaluator.measures_speed else ""))
    changed = state.code != state.input_code
    verdict = _final_check(ctx, state.code, state.input_code)
    if verdict.passed or not changed:
        return {"final": _with_versus(ctx, FinalCheck(verdict=verdict, changed=changed), state.code)}
    failure, tried = verdict.summary(), {state.code, state.input_code}
    for outcome in reversed(state.outcomes):
        if not outcome.improved or outcome.code in tried:
            continue
        tried.add(outcome.code)
        ctx.progress.phase("final_verify", f"the output failed ({failure[:160]}); checking the kernel of stage "
                                           f"{outcome.stage}")
        earlier = _final_check(ctx, outcome.code, state.input_code)
        if earlier.passed:
            final = FinalCheck(verdict=earlier, changed=True, fell_back=True, fell_back_to=outcome.stage,
                               failure=failure)
            return {"final": _with_versus(ctx, final, outcome.code), "code": outcome.code}
    return {"final": FinalCheck(verdict=verdict, changed=changed, fell_back=True, fell_back_to="input",
                                failure=failure), "code": state.input_code, "status": FINAL_FAILED}


def _final_check(ctx: RunContext, code: str, input_code: str) -> Verdict:
    changed = code != input_code
    return ctx.evaluator.evaluate(code, ctx.problem, allow_torch=ctx.allowance, unseen=True,
                                  baseline_source=input_code if changed else None, name="final")


def _with_versus(ctx: RunContext, final: FinalCheck, code: str) -> FinalCheck:
    """A passing result, timed against PyTorch too (GPU only)."""
    versus, note = _versus_pytorch(ctx, code) if final.verdict.passed else ({}, "")
    return final.model_copy(update={"versus": versus, "versus_note": note})


def _versus_pytorch(ctx: RunContext, code: str) -> tuple[dict[str, Timing], str]:
    """The output against eager PyTorch and torch.compile (eager alone if compiling fails); GPU only."""
    if not ctx.evaluator.measures_speed or ctx.problem.reference_is_self:
        return {}, ""
    ctx.progress.phase("final_verify", "timing the output against eager PyTorch and torch.compile")
    reasons = []
    for compile_too in (True, False):
        verdict = ctx.evaluator.evaluate(code, ctx.problem, allow_torch=ctx.allowance, time_it=True, full=False,
                                         compile_baseline=compile_too, name="final_vs_pytorch")
        if verdict.passed and verdict.timings:
            note = "" if compile_too else f"torch.compile could not be timed: {reasons[0]}"
            return dict(verdict.timings), note
        reasons.append(verdict.summary()[:300])
    return {}, f"timing against PyTorch failed: {reasons[-1]}"


def report_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
    from xe_forge.pipeline.report import write_reports

    status = state.status or _status(state.final)
    write_reports(state, runtime.context, status)
    return {"status": status}


def _status(final: FinalCheck | None) -> str:
    if final is None or not final.verdict.passed:
        return FINAL_FAILED
    if not final.changed:
        return NO_IMPROVEMENT
    timing = final.verdict.timing
    if timing is not None:
        return IMPROVED if timing.faster else NO_MEASURED_IMPROVEMENT
    return CORRECT_UNTIMED
