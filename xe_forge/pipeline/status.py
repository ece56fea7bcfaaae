"""A run's status, said once: what the report, its headline, the exit code and a resumed batch agree on.

Where speed is not measured (the CPU) a changed kernel is at most "verified correct, speed not
measured"; only a GPU timing makes it "improved". Exit code 0 for those two (README, "Exit codes").
A check that did not run is said out loud too: every report and console summary lists it, and the
headline carries it ("improved, unseen shapes not checked"), so a skipped check is never mistaken for
a passed one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from xe_forge.problem.kernel import Problem
    from xe_forge.verify.models import Verdict

IMPROVED = "improved"
CORRECT_UNTIMED = "verified correct, speed not measured"
NO_IMPROVEMENT = "no improvement"
NO_MEASURED_IMPROVEMENT = "no measured improvement"
FINAL_FAILED = "final verification failed"
STATUSES = (IMPROVED, CORRECT_UNTIMED, NO_IMPROVEMENT, NO_MEASURED_IMPROVEMENT, FINAL_FAILED)

# A run that ended before its report node (its failure report says why; the CLI exits with the error's code)
INTERRUPTED = "interrupted"  # Ctrl-C: resumable
STOPPED = "stopped"  # the environment (the LLM endpoint, a device): fix it, then resume
FAILED = "failed"  # bad input found late, or a crash


def exit_code(status: str) -> int:
    return 0 if status in (IMPROVED, CORRECT_UNTIMED) else 1


def tone(status: str | None) -> str:
    """How a page colours a status: 'ok' (exit code 0), 'bad' (failed, or stopped short), else 'warn'."""
    if status is not None and exit_code(status) == 0:
        return "ok"
    bad = (FINAL_FAILED, FAILED, INTERRUPTED, STOPPED, "crashed", "timeout")  # the last two: a batch problem's process
    return "bad" if status in bad else "warn"


def stage_result(improved: bool, speed_verified: bool) -> str:
    """What one stage did: 'improved' only where measured; a change verified on the CPU is no more than correct."""
    if not improved:
        return "kept input"
    return IMPROVED if speed_verified else "changed, verified correct"


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
    refused = next((r.eval_refused for r in verdict.correctness if r.eval_refused), None)
    if refused:
        out.append(Skipped(check="eval", what="eval mode not checked", reason=refused))
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


def headline(status: str, skipped: list[Skipped], *, unchanged: bool = False) -> str:
    """The status with what was not checked, each said once: 'verified correct, speed not measured, unseen
    shapes not checked' (the status already says the speed was not measured); a run that kept its input
    says 'unchanged', so no figure below it reads as the output's."""
    first = f"{status}: unchanged, the output is the input" if unchanged else status
    return ", ".join([first] + [s.what for s in skipped if s.what not in status])
