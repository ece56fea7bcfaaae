"""The stages, as declared in stages/*.yaml: stages differ in data, not in code.

The YAML files are the one definition of the stage names: the graph has one node per file, `--stages`,
the knowledge base's `stages:` and the analysis's issue kinds are checked against them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field

from xe_forge.errors import InputError
from xe_forge.names import RecipeName, SourceName
from xe_forge.paths import data_dir

__all__ = ["SourceName", "StageSpec", "load_stages", "order_with_dependencies", "parse_stage_list",
           "stage_for_issue", "stage_names", "standalone_stage"]


class StageSpec(BaseModel):
    name: str
    order: int
    summary: str
    goal: str
    may_change: list[str] = Field(default_factory=list)
    must_not_change: list[str] = Field(default_factory=list)
    issue_kinds: list[str] = Field(default_factory=list)
    kb_stages: list[str] = Field(default_factory=list)
    recipes: list[RecipeName] = Field(default_factory=list)
    sources: list[SourceName] = Field(default_factory=list, description="candidate sources besides the rules "
                                      "and LLM proposers, e.g. `lower`: TorchInductor's lowering of the reference")
    prompt: str = "stage_optimize.j2"
    requires: list[str] = Field(default_factory=list)
    accept: Literal["faster", "correct"] = Field("faster", description="faster: a candidate replaces the best when "
                                                  "measured faster (CPU: when a gain is predicted); correct: the "
                                                  "first correct candidate wins")
    open_ended: bool = Field(False, description="planned by the LLM engine without an issue; takes issues of "
                                                "kinds no stage lists")


@lru_cache(maxsize=4)
def load_stages(directory: Path | None = None) -> dict[str, StageSpec]:
    """All stage specs by name, in pipeline order."""
    directory = directory or data_dir("stages")
    specs = []
    for path in sorted(directory.glob("*.yaml")):
        spec = StageSpec(**yaml.safe_load(path.read_text()))
        if spec.name != path.stem:
            raise ValueError(f"{path}: stage name '{spec.name}' must match the file name")
        specs.append(spec)
    return {s.name: s for s in sorted(specs, key=lambda s: s.order)}


@lru_cache(maxsize=4)
def standalone_stage(name: str) -> StageSpec:
    """A CoVeR loop run outside the graph (stages/standalone/<name>.yaml), e.g. the batch's port."""
    return StageSpec(**yaml.safe_load((data_dir("stages") / "standalone" / f"{name}.yaml").read_text()))


def stage_names() -> tuple[str, ...]:
    """Every stage, in pipeline order."""
    return tuple(load_stages())


def stage_for_issue(kind: str) -> str:
    """The stage whose YAML lists this issue kind; a kind no stage lists goes to the open-ended stage."""
    stages = load_stages().values()
    listed = [s.name for s in stages if kind in s.issue_kinds]
    return (listed or [s.name for s in stages if s.open_ended])[0]


def parse_stage_list(text: str | None) -> list[str] | None:
    """`--stages dtype,fusion` -> names, checked; None means 'let the plan decide'."""
    if not text:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in stage_names()]
    if unknown:
        raise InputError(f"unknown stage(s): {', '.join(unknown)}", hint=f"stages: {', '.join(stage_names())}")
    return names


def order_with_dependencies(planned: list[str], stages: dict[str, StageSpec]) -> list[str]:
    """Keep the planner's order but move a stage after the planned stages it requires."""
    result: list[str] = []
    pending = [s for s in dict.fromkeys(planned) if s in stages]
    while pending:
        for name in pending:
            deps = [d for d in stages[name].requires if d in pending and d != name]
            if not deps:
                result.append(name)
                pending.remove(name)
                break
        else:  # a cycle cannot happen with the shipped YAML; fall back to canonical order
            result += sorted(pending, key=lambda n: stages[n].order)
            break
    return result
