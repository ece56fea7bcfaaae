"""What the rules proposer hands back: candidates (the one Proposal of proposers/base.py) and recorded
refusals (Skip).

`Applied` and `NotApplicable` are internal to the rules package: a transform returns the former or
raises the latter, and the dispatcher turns them into the public models.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from xe_forge.proposers.base import Proposal

__all__ = ["Applied", "NotApplicable", "Proposal", "Skip"]


class Skip(BaseModel):
    """A recipe that did not apply, with the precondition that failed."""

    recipe: str
    entry_id: str | None
    reason: str


@dataclass(frozen=True)
class Applied:
    """A transform's successful result before it becomes a Proposal."""

    code: str
    rationale: str
    entry_id: str | None = None
    """Overrides the recipe entry's id when another entry supplied the parameters (a config space)."""


class NotApplicable(Exception):  # noqa: N818 - a refusal, not an error
    """A precondition failed; the message is the Skip reason, precise enough to act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
