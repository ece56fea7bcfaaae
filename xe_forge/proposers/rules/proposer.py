"""The rules engine as a CoVeR proposer: the knowledge base's recipes, applied offline, in order.

Candidates are computed once per stage (deterministic source-to-source transforms) and handed out
one per iteration; the reasons recipes did not apply are kept for the report.
"""

from __future__ import annotations

from typing import Any

from xe_forge.proposers.base import Proposal, StageRequest
from xe_forge.proposers.rules.dispatch import propose_rules


class RulesProposer:
    source = "rules"

    def __init__(self, kb: Any, target: str, toolchain: Any) -> None:
        self.kb = kb
        self.target = target
        self.toolchain = toolchain
        self._queue: list[Proposal] | None = None
        self.skips: dict[str, list[dict[str, Any]]] = {}

    def reset(self) -> None:
        self._queue = None

    def _entries(self, stage: str, kind: str) -> list[dict[str, Any]]:
        entries = self.kb.filter(stage=stage if kind == "recipe" else None, target=self.target, kind=kind,
                                 toolchain=self.toolchain)
        return [e.model_dump(mode="json", exclude_none=True) for e in entries]

    def candidates(self, request: StageRequest) -> list[Proposal]:
        stage = request.stage.name
        recipes = [r for r in self._entries(stage, "recipe")
                   if (r.get("recipe") or {}).get("name") in request.stage.recipes]
        if not recipes:
            return []
        proposals, skips = propose_rules(request.code, stage=stage, target=self.target, toolchain=self.toolchain,
                                         recipes=recipes, config_spaces=self._entries(stage, "config_space"),
                                         reference=request.reference)
        self.skips[stage] = [s.model_dump() for s in skips]
        return proposals

    def next(self, request: StageRequest) -> Proposal | None:
        if self._queue is None:
            self._queue = self.candidates(request)
        return self._queue.pop(0) if self._queue else None
