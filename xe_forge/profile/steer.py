"""The rules proposer steered by a limiter: the limiter's variants first, then its preferred recipes.

A thin wrapper over any proposer with `candidates(request)` (the rules engine): it never changes how
a recipe is applied, only which candidates exist (the limiter's recipe variants, built by the same
`propose_rules`) and their order. Each stage's before/after order is kept in `notes`, which is how a
run shows that the limiter changed the next candidate.
"""

from __future__ import annotations

from typing import Any

from xe_forge.profile.feedback import Preferences, RecipeVariant
from xe_forge.profile.models import SteeringNote
from xe_forge.proposers.base import Proposal, StageRequest
from xe_forge.proposers.rules import propose_rules


def label(p: Proposal) -> str:
    return f"{p.recipe} [{p.entry_id}]" if p.entry_id else p.recipe


def variant_entry(v: RecipeVariant, limiter: str) -> dict[str, Any]:
    """A recipe variant in the shape of a knowledge-base recipe entry, as propose_rules reads them."""
    return {"id": f"profile:{limiter}:{v.recipe}", "kind": "recipe", "stages": [v.stage],
            "recipe": {"name": v.recipe, "params": dict(v.params), "expected_effect": v.why}}


def order(proposals: list[Proposal], prefs: Preferences) -> list[Proposal]:
    """Limiter variants first (their YAML order), then preferred recipes by rank, then the rest as they were."""
    def rank(item: tuple[int, Proposal]) -> tuple[int, int, int]:
        i, p = item
        if p.entry_id and p.entry_id.startswith(f"profile:{prefs.limiter}:"):
            return (0, 0, i)
        if p.recipe in prefs.recipes:
            return (1, prefs.recipes.index(p.recipe), i)
        return (2, 0, i)

    return [p for _, p in sorted(enumerate(proposals), key=rank)]


class SteeredRules:
    """CoVeR's rules generator with the limiter's preferences applied."""

    source = "rules"

    def __init__(self, inner: Any, prefs: Preferences, target: str, toolchain: Any,
                 notes: list[SteeringNote] | None = None) -> None:
        self.inner = inner
        self.prefs = prefs
        self.target = target
        self.toolchain = toolchain
        self._queue: list[Proposal] | None = None
        self.notes = notes if notes is not None else []

    @property
    def skips(self) -> dict[str, list[dict[str, Any]]]:
        return getattr(self.inner, "skips", {})

    def reset(self) -> None:
        self.inner.reset()
        self._queue = None

    def _variants(self, request: StageRequest) -> list[Proposal]:
        entries = [variant_entry(v, self.prefs.limiter) for v in self.prefs.variants
                   if v.stage == request.stage.name and v.recipe in request.stage.recipes]
        if not entries:
            return []
        found, _ = propose_rules(request.code, stage=request.stage.name, target=self.target, toolchain=self.toolchain,
                                 recipes=entries, config_spaces=[], reference=request.reference)
        return [Proposal(code=p.code, recipe=p.recipe, entry_id=p.entry_id, rationale=p.rationale,
                         expected_effect=p.expected_effect, source="rules") for p in found]

    def candidates(self, request: StageRequest) -> list[Proposal]:
        base = self.inner.candidates(request)
        seen = {p.code for p in base}
        extra = [p for p in self._variants(request) if p.code not in seen]
        steered = order(extra + base, self.prefs)
        self.notes.append(SteeringNote(stage=request.stage.name, limiter=self.prefs.limiter,
                                       unsteered=[label(p) for p in base], steered=[label(p) for p in steered]))
        return steered

    def next(self, request: StageRequest) -> Proposal | None:
        if self._queue is None:
            self._queue = self.candidates(request)
        return self._queue.pop(0) if self._queue else None
