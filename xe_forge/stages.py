"""The nine stages, as declared in stages/*.yaml: stages differ in data, not in code."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from xe_forge.paths import data_dir

STAGE_NAMES = ("algorithmic", "dtype", "fusion", "memory_access", "block_io", "persistent", "device_tuning",
               "autotuning", "discovery")


class StageSpec(BaseModel):
    name: str
    order: int
    summary: str
    goal: str
    may_change: list[str] = Field(default_factory=list)
    must_not_change: list[str] = Field(default_factory=list)
    issue_kinds: list[str] = Field(default_factory=list)
    kb_stages: list[str] = Field(default_factory=list)
    recipes: list[str] = Field(default_factory=list)
    # candidate sources besides the rules and LLM proposers (e.g. `lower`: TorchInductor's lowering)
    sources: list[str] = Field(default_factory=list)
    prompt: str = "stage_optimize.j2"
    requires: list[str] = Field(default_factory=list)


@lru_cache(maxsize=4)
def load_stages(directory: Path | None = None) -> dict[str, StageSpec]:
    """All stage specs by name, in pipeline order."""
    directory = directory or data_dir("stages")
    specs = [StageSpec(**yaml.safe_load(p.read_text())) for p in sorted(directory.glob("*.yaml"))]
    return {s.name: s for s in sorted(specs, key=lambda s: s.order)}


def parse_stage_list(text: str | None) -> list[str] | None:
    """`--stages dtype,fusion` -> names, checked; None means 'let the plan decide'."""
    from xe_forge.errors import InputError

    if not text:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in STAGE_NAMES]
    if unknown:
        raise InputError(f"unknown stage(s): {', '.join(unknown)}", hint=f"stages: {', '.join(STAGE_NAMES)}")
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
