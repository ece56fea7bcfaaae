"""The graph's nodes: baseline, analyze, plan, one CoVeR node per stage, final_verify, report.

Each stage node is the same CoVeR function with a different stages/*.yaml.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.runtime import Runtime

from xe_forge.errors import InputError
from xe_forge.pipeline.analyze import Issue, analyze_source, stages_with_issues
from xe_forge.pipeline.cover import CandidateRecord, recorder, run_stage
from xe_forge.pipeline.coverage import timed_out
from xe_forge.pipeline.progress import RAISE_TIMEOUT
from xe_forge.pipeline.state import FinalCheck, ForgeState, RunContext
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
        found = [i for i in ctx.llm.analyze(task) if i.stage in ctx.stages]
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
    return {"plan": plan}


def _can_serve(ctx: RunContext, stage: str) -> bool:
    """In rules mode a stage runs only if it has recipes; the LLM can serve any stage."""
    return ctx.llm is not None or bool(ctx.stages[stage].recipes)


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
        proposers: list[Proposer] = [ctx.rules] if ctx.llm is None else [ctx.rules, ctx.llm]
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
        ctx.store.stage(ctx.run_id, name, "improved" if outcome.improved else "kept input",
                        speedup=outcome.speedup, summary=outcome.report().model_dump())
        ctx.progress.stage_done(outcome)
        return {"code": outcome.code, "done": [name], "outcomes": [outcome]}

    stage_node.__name__ = f"stage_{name}"
    return stage_node


def _knowledge(ctx: RunContext, spec: StageSpec, issues: list[Issue]) -> str:
    if ctx.kb is None or ctx.llm is None:
        return ""
    from xe_forge.kb import render_entries, retrieve

    query = " ".join([spec.goal] + [i.description for i in issues])
    entries = []
    for kb_stage in spec.kb_stages:
        entries += retrieve(ctx.kb, query, stage=kb_stage, target=ctx.target, toolchain=ctx.toolchain,
                            budget_tokens=ctx.kb_budget // max(1, len(spec.kb_stages)))
    return render_entries(list({e.id: e for e in entries}.values()))


def final_verify_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
    """Unseen shapes and a final interleaved timing of input vs output; a failure falls back to the input.

    On a GPU the output is also timed against eager PyTorch and torch.compile: "is it faster than what
    I had in PyTorch?" is a user's first question."""
    ctx = runtime.context
    ctx.progress.phase("final_verify", "unseen shapes" + (" and final timing" if ctx.evaluator.measures_speed else ""))
    changed = state.code != state.input_code
    verdict = ctx.evaluator.evaluate(state.code, ctx.problem, allow_torch=ctx.allowance, unseen=True,
                                     baseline_source=state.input_code if changed else None, name="final")
    if not verdict.passed and changed:
        return {"final": FinalCheck(verdict=verdict, changed=changed, fell_back=True), "code": state.input_code,
                "status": "final verification failed"}
    versus, note = _versus_pytorch(ctx, state.code) if verdict.passed else ({}, "")
    return {"final": FinalCheck(verdict=verdict, changed=changed, versus=versus, versus_note=note)}


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
        return "final verification failed"
    if not final.changed:
        return "no improvement"
    timing = final.verdict.timing
    if timing is not None:
        return "improved" if timing.faster else "no measured improvement"
    return "improved (speed unverified)"
