"""The graph's nodes: baseline, analyze, plan, one CoVeR node per stage, final_verify, report.

Each stage node is the same CoVeR function with a different stages/*.yaml.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from langgraph.runtime import Runtime

from xe_forge.errors import InputError, UnverifiableProblem
from xe_forge.pipeline.analyze import Issue, analyze_source, stages_with_issues
from xe_forge.pipeline.cover import CandidateRecord, recorder, run_stage
from xe_forge.pipeline.progress import RAISE_TIMEOUT
from xe_forge.pipeline.ratios import LOWERING
from xe_forge.pipeline.replan import from_source, replanned
from xe_forge.pipeline.state import BEST_SO_FAR, FinalCheck, ForgeState, RunContext
from xe_forge.pipeline.status import (
    CORRECT_UNTIMED,
    FINAL_FAILED,
    IMPROVED,
    NO_IMPROVEMENT,
    NO_MEASURED_IMPROVEMENT,
    timed_out,
)
from xe_forge.problem.roofline import problem_facts
from xe_forge.problem.signature import verdict_signature_error
from xe_forge.profile import session as profile_hooks
from xe_forge.prompting import render
from xe_forge.proposers.base import Proposal, Proposer, StageRequest
from xe_forge.proposers.rules.portable import portable_autotune
from xe_forge.stages import StageSpec, order_with_dependencies
from xe_forge.verify.models import Verdict, Versus

Update = dict[str, object]  # a node returns only the ForgeState fields it changes


def baseline_node(state: ForgeState, runtime: Runtime[RunContext]) -> Update:
    """The input kernel must pass against its reference, or there is nothing to optimize (exit 2)."""
    ctx = runtime.context
    ctx.progress.phase("baseline", "checking the input kernel against its reference")
    verdict = ctx.evaluator.evaluate(state.input_code, ctx.problem, allow_torch=ctx.allowance, name="input")
    mismatch = verdict_signature_error(ctx.problem, verdict)
    if mismatch is not None:
        raise mismatch
    if verdict.stage_failed == "unverifiable":
        flags = sorted({f for r in verdict.correctness[:1] for f in r.degenerate})
        raise UnverifiableProblem(f"the problem cannot be verified: its reference is degenerate ({'; '.join(flags)}), "
                                  "so no kernel's output can be told from a constant", flags=flags, hint="pick other sizes or weights in the spec, or "
                                  "another problem (KernelBench has such references)")
    if not verdict.passed:
        reasons = "; ".join(f.render() for f in verdict.findings[:3]) or verdict.summary()
        raise InputError(f"the input kernel fails against its reference: {reasons}",
                         hint=f"its check was killed at {ctx.evaluator.timeout:g} s: {RAISE_TIMEOUT}"
                         if timed_out(verdict) else "xe-forge optimizes correct kernels; `xe-forge check` shows the full verdict")
    ctx.clock.saw_input_check(verdict.seconds, timed=ctx.evaluator.measures_speed)
    if ctx.clock.budget_s is not None:
        ctx.progress.phase("budget", f"the run ends within {ctx.clock.describe()} (--budget; {ctx.clock.final_s:.0f} s "
                                     "kept for the final check)")
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


def budget_spent(ctx: RunContext) -> str | None:
    """Why no further stage may start: the LLM's budget, or a time budget (`--budget 45m`, any engine)."""
    reason = ctx.llm.client.budget_spent() if ctx.llm is not None else None
    return reason or ctx.clock.stage_stop()


def _budget_stop(ctx: RunContext) -> Update:
    """{'stopped': why} once the budget is spent: the router then skips to final_verify."""
    reason = budget_spent(ctx)
    if reason:
        ctx.progress.phase("budget", f"{reason}: the remaining stages are skipped")
    return {"stopped": reason} if reason else {}


def keep_best(run_dir: Path, code: str) -> None:
    """The best kernel verified so far, in the run directory as each accepted candidate improves it: a run
    killed before its end (a job's time limit, SIGKILL), even in the middle of a stage, still leaves it.
    Written whole, then renamed."""
    tmp = run_dir / f".{BEST_SO_FAR}.tmp"
    tmp.write_text(code)
    os.replace(tmp, run_dir / BEST_SO_FAR)


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
                            max_iters=ctx.max_iters, on_candidate=on_candidate,
                            on_accept=lambda code: keep_best(ctx.run_dir, code), clock=ctx.clock)
        skips = ctx.rules.skips.get(name, [])
        if not outcome.candidates and skips and not outcome.note.startswith("time budget"):
            said = dict.fromkeys(f"{s['recipe']}: {s['reason']}" for s in skips)  # one line per distinct reason
            outcome.note = "no recipe applied: " + "; ".join(list(said)[:4])
        notes = [outcome.note] if outcome.note else []
        outcome.note = "; ".join(notes + [f"{src.source} offered nothing: {src.skip}" for src in sources if src.skip])
        ctx.store.stage(ctx.run_id, name, "improved" if outcome.improved else "kept input",
                        speedup=outcome.speedup, summary=outcome.report().model_dump())
        ctx.progress.stage_done(outcome)
        update: Update = {"code": outcome.code, "done": [name], "outcomes": [outcome], **_budget_stop(ctx)}
        if outcome.code != state.code and from_source(outcome, spec):
            update.update(_replan(ctx, state, name, outcome.code))
        return update

    stage_node.__name__ = f"stage_{name}"
    return stage_node


def _replan(ctx: RunContext, state: ForgeState, name: str, code: str) -> Update:
    """The stages after one that took a candidate source's kernel serve that kernel's issues."""
    issues, plan, added = replanned(code, state.issues, state.plan, [*state.done, name], ctx.stages,
                                    lambda s: _can_serve(ctx, s), fixed=bool(ctx.only_stages))
    if added:
        ctx.progress.phase("plan", f"the kernel of stage {name} came from a candidate source; its issues add "
                                   f"{', '.join(added)}")
        ctx.progress.plan(plan)
    return {"issues": issues, "plan": plan}


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

    On a GPU the result is also timed against eager PyTorch and torch.compile ("is it faster than what
    I had in PyTorch?" is a user's first question), and against the Triton-only lowering where the run
    made one. A run that kept its input times the input against eager and torch.compile, and is
    reported as that: there is no output-vs-input figure for a kernel compared with itself."""
    ctx = runtime.context
    changed = state.code != state.input_code
    timed = ctx.evaluator.measures_speed and changed
    ctx.progress.phase("final_verify", "unseen shapes" + (" and the output timed against the input" if timed else ""))
    code = runs_anywhere(state.code, state.input_code)
    verdict = _final_check(ctx, code, state.input_code)
    if verdict.passed or not changed:
        return {"final": _with_versus(ctx, FinalCheck(verdict=verdict, changed=changed), code), "code": code}
    failure, tried = verdict.summary(), {state.code, state.input_code}
    for outcome in reversed(state.outcomes):
        if not outcome.improved or outcome.code in tried:
            continue
        tried.add(outcome.code)
        ctx.progress.phase("final_verify", f"the output failed ({failure[:160]}); checking the kernel of stage "
                                           f"{outcome.stage}")
        code = runs_anywhere(outcome.code, state.input_code)
        earlier = _final_check(ctx, code, state.input_code)
        if earlier.passed:
            final = FinalCheck(verdict=earlier, changed=True, fell_back=True, fell_back_to=outcome.stage,
                               failure=failure)
            return {"final": _with_versus(ctx, final, code), "code": code}
    return {"final": FinalCheck(verdict=verdict, changed=changed, fell_back=True, fell_back_to="input",
                                failure=failure), "code": state.input_code, "status": FINAL_FAILED}


def runs_anywhere(code: str, input_code: str) -> str:
    """The output as it will be written, runnable wherever the input ran: an @triton.autotune gets its own
    benchmark for Triton's interpreter (proposers/rules/portable.py), so plain `python` on the CPU runs it
    without xe-forge's patch. The final check verifies this text; an unchanged input is left as it is."""
    return code if code == input_code else portable_autotune(code)


def _final_check(ctx: RunContext, code: str, input_code: str) -> Verdict:
    """The unseen shapes, then (GPU) one timing run: a changed output against the input, eager PyTorch,
    torch.compile and the Triton-only lowering where the run made one, each interleaved with it in turn;
    an unchanged input against eager and torch.compile only (it is not timed against itself)."""
    changed = code != input_code
    timed = ctx.evaluator.measures_speed and not ctx.problem.reference_is_self
    versus = [Versus(label="torch.compile", kind="compile")]
    if changed:
        versus.insert(0, Versus(label="eager", kind="eager"))
        lowered = _lowering(ctx, code)
        versus += [Versus(label=LOWERING, kind="input", source=lowered)] if lowered else []
    return ctx.evaluator.evaluate(code, ctx.problem, allow_torch=ctx.allowance, unseen=True,
                                  baseline_source=input_code if changed else None,
                                  time_it=True if timed else (None if changed else False),
                                  versus=versus if timed else (),
                                  name="final")


def _with_versus(ctx: RunContext, final: FinalCheck, code: str) -> FinalCheck:
    """The final check's timings filed as the report reads them: output vs input in the verdict, the
    others (PyTorch, the lowering) under `versus`, from the same run."""
    verdict = final.verdict
    if not verdict.passed or not ctx.evaluator.measures_speed:
        return final
    versus = {k: t for k, t in verdict.timings.items() if k != "input kernel"}
    own = {k: t for k, t in verdict.timings.items() if k == "input kernel"}
    missing = [n for n in verdict.notes if n.startswith(("eager could not", "torch.compile could not"))]
    note = "" if "eager" in versus or ctx.problem.reference_is_self else "timing against PyTorch failed"
    note = "; ".join(missing) if missing and not note else note
    verdict = verdict.model_copy(update={"timings": own, "timing": next(iter(own.values()), None)
                                         if final.changed else None})
    return final.model_copy(update={"verdict": verdict, "versus": versus, "versus_note": note})


def _lowering(ctx: RunContext, code: str) -> str | None:
    """The Triton-only lowering (`sources: [lower]`) the run made and verified, unless it is the output."""
    lowered = [c["code"] for c in ctx.store.candidates(ctx.run_id) if c["source"] == "lower" and c["passed"]]
    return lowered[-1] if lowered and lowered[-1] != code else None


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
