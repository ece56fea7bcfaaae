"""Speed ratios as the user reads them: both sides named as timed, with the repetition spread.

A ratio is `subject vs baseline`: the subject is the kernel that was timed (the output, or the input
when the run left it unchanged), the baseline what it was timed against, by the key the verifier
files it under in `Verdict.timings` ("input kernel", "eager", "torch.compile"), plus the Triton-only
lowering where one was made. Every printed figure (console, report.json/md/html, batch summary)
comes from `Ratio.line()` or `Ratio.label`, so no output can call eager PyTorch "the input".
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from xe_forge.verify.models import Timing, baseline_name

Subject = Literal["output", "input"]

SUBJECT_NAMES = {"output": "output", "input": "input kernel (unchanged)"}
LOWERING = "lowering"  # the key a ratio against the Triton-only lowering is filed under (nodes.final_verify)


def repeat_note(output: str) -> str:
    """What one process's figures do not show (issue 28: one reference's eager time read 0.571 ms in one
    process and 0.305 ms in another on one GPU), and the command that shows it for `output`."""
    return (f"figures from one process; `xe-forge bench --repeat 5 {output}` re-times them in fresh processes "
            "and shows how far they move")


def ratio_label(subject: Subject, baseline: str) -> str:
    """'output vs eager PyTorch', 'input kernel (unchanged) vs torch.compile (default)': both sides named."""
    return f"{SUBJECT_NAMES[subject]} vs {baseline_name(baseline)}"


class Ratio(BaseModel):
    """One timed comparison: `subject` timed interleaved against `baseline` in one worker."""

    subject: Subject
    baseline: str = Field(description="the Verdict.timings key: 'input kernel', 'eager', 'torch.compile', "
                                      "'lowering'")
    timing: Timing
    run: str = Field("", description="which timed run it came from ('final check', 'vs PyTorch', 'vs lowering')")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        """'output vs eager PyTorch', 'input kernel (unchanged) vs torch.compile (default)'; in report.json too."""
        return ratio_label(self.subject, self.baseline)

    @property
    def subject_side(self) -> str:
        return "input kernel" if self.subject == "input" else "output"

    def sides(self) -> str:
        """'output 1.2340 ms ± 0.0100 vs eager PyTorch 2.2710 ms ± 0.0200 (medians, IQR)'."""
        t = self.timing
        return (f"{self.subject_side} {t.candidate_ms:.4f} ms ± {t.candidate_spread_ms:.4f} vs "
                f"{baseline_name(self.baseline)} {t.baseline_ms:.4f} ms ± {t.baseline_spread_ms:.4f}")

    def spread_text(self) -> str:
        t = self.timing
        return f"{t.reps} interleaved pairs, ratio spread ±{t.spread:.1%} (IQR), margin {t.margin:.1%}"

    def line(self) -> str:
        """The one sentence every output prints for this ratio."""
        verdict = "faster" if self.timing.faster else "not faster"
        return (f"{self.label}: {self.timing.speedup:.3f}x, {verdict} ({self.sides()}; {self.spread_text()}"
                + (f"; timed in the {self.run}" if self.run else "") + ")")


def ratios_of(timings: dict[str, Timing], subject: Subject, run: str = "") -> list[Ratio]:
    return [Ratio(subject=subject, baseline=key, timing=t, run=run) for key, t in timings.items()]


def by_key(ratios: list[Ratio]) -> dict[str, Timing]:
    """The ratios as the Verdict.timings-shaped dict report.json has always carried (`timings`)."""
    return {r.baseline: r.timing for r in ratios}
