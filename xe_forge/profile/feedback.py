"""From a limiter to the next candidate: prompt text for the LLM, preferences for the rules engine.

What each limiter asks for lives in stages/profile/limiters.yaml (data, not code branches): advice
for the prompt, stages to run first, recipes to try first, and recipe variants (e.g. spills -> a
larger GRF mode on Intel, fewer pipeline stages on Hopper) that become extra rules candidates.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from xe_forge.paths import data_dir

GUIDE_FILE = ("profile", "limiters.yaml")


class Thresholds(BaseModel):
    busy_pct: float = 60.0
    roof_fraction: float = 0.6
    spill_traffic_share: float = 0.02
    low_occupancy_pct: float = 25.0


class RecipeVariant(BaseModel):
    """A rules-engine recipe with the parameters a limiter calls for, on some targets."""

    recipe: str
    stage: str
    targets: list[str]
    params: dict[str, Any]
    why: str


class LimiterGuide(BaseModel):
    title: str
    means: str
    advice: list[str] = Field(default_factory=list)
    stages: list[str] = Field(default_factory=list)
    recipes: list[str] = Field(default_factory=list)
    variants: list[RecipeVariant] = Field(default_factory=list)


class Guides(BaseModel):
    thresholds: Thresholds = Field(default_factory=Thresholds)
    limiters: dict[str, LimiterGuide]


class Preferences(BaseModel):
    """What the rules engine and the planner should try first for one limiter and target."""

    limiter: str
    stages: list[str] = Field(default_factory=list)
    recipes: list[str] = Field(default_factory=list)
    variants: list[RecipeVariant] = Field(default_factory=list)


@lru_cache(maxsize=4)
def load_guides(path: Path | None = None) -> Guides:
    path = path or data_dir("stages").joinpath(*GUIDE_FILE)
    return Guides(**yaml.safe_load(path.read_text()))


def preferences(limiter: str, target: str, guides: Guides | None = None) -> Preferences:
    guide = (guides or load_guides()).limiters.get(limiter)
    if guide is None:
        return Preferences(limiter=limiter)
    return Preferences(limiter=limiter, stages=guide.stages, recipes=guide.recipes,
                       variants=[v for v in guide.variants if target in v.targets])


def render_feedback(record: Any, diagnosis: Any, guides: Guides | None = None) -> str:
    """The prompt block: what was measured, the limiter, and what that limiter asks for."""
    from xe_forge.prompting import render

    guide = (guides or load_guides()).limiters.get(diagnosis.limiter)
    return render("profile_feedback.j2", record=record, diagnosis=diagnosis, guide=guide).strip()


def steer_plan(plan: list[str], prefs: Preferences, can_serve) -> list[str]:
    """The limiter's stages first (those that can run), then the rest of the plan in its order."""
    first = [s for s in prefs.stages if s in plan or can_serve(s)]
    return first + [s for s in plan if s not in first]
