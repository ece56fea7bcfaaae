"""After a stage whose kernel came from a candidate source (a port: TorchInductor's lowering), the
issues and the plan of the stages still to run are those of that kernel, not of the input.

A port is a different module: its kernels have no @triton.autotune, fixed tiles, other launches.
The stages after the one that accepted it must start from it and serve its issues (the rules
proposer's recipes apply to a lowered module like to any other, proposers/rules/normalize.py), so
its static analysis replaces the input's for every stage not yet run, and a stage that now has
issues joins the plan. A plan the user fixed (`--stages`) stays as given.
"""

from __future__ import annotations

from collections.abc import Callable

from xe_forge.pipeline.analyze import Issue, analyze_source, stages_with_issues
from xe_forge.pipeline.cover import StageOutcome
from xe_forge.stages import StageSpec, order_with_dependencies


def from_source(outcome: StageOutcome, spec: StageSpec) -> bool:
    """Whether the stage's accepted kernel passed through a candidate source (its line starts there)."""
    return any(c.accepted and c.source in spec.sources for c in outcome.candidates)


def replanned(code: str, issues: list[Issue], plan: list[str], done: list[str], stages: dict[str, StageSpec],
              can_serve: Callable[[str], bool], fixed: bool) -> tuple[list[Issue], list[str], list[str]]:
    """(issues, plan, stages added) once `code` replaced the kernel: the issues of the stages run so
    far are kept (the report reads them), those of every other stage are `code`'s own; the stages
    with issues now, not planned yet, are added in their canonical order (unless `fixed`)."""
    fresh = [i for i in analyze_source(code) if i.stage not in done]
    kept = [i for i in issues if i.stage in done]
    added: list[str] = []
    if not fixed:
        planned = set(plan)
        added = sorted((s for s in stages_with_issues(fresh) if s in stages and s not in planned
                        and can_serve(s)), key=lambda s: stages[s].order)
    return kept + fresh, order_with_dependencies(plan + added, stages), added
