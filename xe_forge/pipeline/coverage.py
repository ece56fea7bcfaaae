"""Which checks a verdict did not run, said out loud: every report and console summary lists them, and
a status carries them ("improved, unseen shapes not checked"), so a skipped check is never mistaken
for a passed one."""

from __future__ import annotations

from pydantic import BaseModel

from xe_forge.problem.kernel import Problem
from xe_forge.verify.models import Verdict


class Skipped(BaseModel):
    """One check that did not run, and why."""

    check: str
    what: str  # how a status line says it: "unseen shapes not checked"
    reason: str

    def render(self) -> str:
        return f"{self.what}: {self.reason}"


def unseen_shapes(verdict: Verdict | None) -> int:
    """Unseen-shape checks the verdict holds (the first correctness report is the variant itself)."""
    return max(0, len(verdict.correctness) - 1) if verdict else 0


def _unseen_reason(problem: Problem, requested: bool) -> str:
    if not requested:
        return "skipped on request (--no-unseen)"
    if problem.spec is not None:
        return "the spec has no `unseen:` entries (docs/SPEC.md; `xe-forge spec init` writes some)"
    return ("no spec, and the reference has no module-level `batch_size` to vary "
            "(`xe-forge spec init KERNEL` writes a spec with unseen shapes)")


def skipped_checks(verdict: Verdict | None, problem: Problem, *, unseen_requested: bool = True,
                   speed_requested: bool = False) -> list[Skipped]:
    """The checks a passing verdict did not run; a failing verdict stops early, and says where."""
    out: list[Skipped] = []
    if problem.reference_is_self:
        out.append(Skipped(check="reference", what="no reference",
                           reason="correctness is relative to the input kernel itself (pass --reference, or put "
                                  "<stem>_pytorch.py beside the kernel)"))
    if verdict is None or not verdict.passed:
        return out
    if unseen_shapes(verdict) == 0:
        out.append(Skipped(check="unseen", what="unseen shapes not checked",
                           reason=_unseen_reason(problem, unseen_requested)))
    main = verdict.correctness[0] if verdict.correctness else None
    if main is not None and main.ghost_changed is None:
        out.append(Skipped(check="ghost", what="ghost replay not run",
                           reason="the output was not re-checked with the Triton kernels made no-ops"))
    if speed_requested and not verdict.speed_measured:
        out.append(Skipped(check="speed", what="speed not measured",
                           reason=verdict.speed_note.removeprefix("speed not measured: ") or "no timing was made"))
    return out


def timed_out(verdict: Verdict) -> bool:
    """The evaluation was killed at its --timeout (a hang, or a kernel slower than the limit allows)."""
    return any(f.check == "worker" and "timed out" in f.message for f in verdict.findings)


def headline(status: str, skipped: list[Skipped]) -> str:
    """The status with what was not checked: 'improved, speed not measured, unseen shapes not checked'."""
    base = status.removesuffix(" (speed unverified)")
    return ", ".join([base] + [s.what for s in skipped])
