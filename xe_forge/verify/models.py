"""The verifier's records: what was checked, what passed, what failed, with figures.

Every verdict the product reports is one of these, stored as JSON in the run store; the worker
process sends them back across the process boundary as plain dicts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Stage = Literal["static", "import", "correctness", "unseen", "launch", "ghost", "timing", "worker", "input"]


class Finding(BaseModel):
    """One failed check, precise enough to feed back to a proposer."""

    check: str
    message: str
    line: int | None = None
    hint: str | None = None

    def render(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"[{self.check}]{where} {self.message}" + (f" — try: {self.hint}" if self.hint else "")


class Comparison(BaseModel):
    """One output compared with the reference."""

    name: str
    shape: list[int]
    passed: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatches: int = 0
    numel: int = 0
    first_bad_index: list[int] | None = None
    note: str = ""


class TrialResult(BaseModel):
    label: str
    passed: bool
    comparisons: list[Comparison] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


class CorrectnessReport(BaseModel):
    variant: str
    dtype: str
    rtol: float
    atol: float
    trials: list[TrialResult] = Field(default_factory=list)
    launches: int = 0
    ghost_changed: bool | None = None
    degenerate: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.findings and all(t.passed for t in self.trials)


class Timing(BaseModel):
    """Interleaved timing of a candidate against a baseline in the same worker."""

    candidate_ms: float
    baseline_ms: float
    speedup: float
    spread: float
    margin: float
    faster: bool
    reps: int
    candidate_spread_ms: float = 0.0
    baseline_spread_ms: float = 0.0
    flops: float | None = None
    bytes: float | None = None

    @property
    def tflops(self) -> float | None:
        return None if not self.flops else self.flops / (self.candidate_ms * 1e-3) / 1e12

    @property
    def gbps(self) -> float | None:
        return None if not self.bytes else self.bytes / (self.candidate_ms * 1e-3) / 1e9


class Verdict(BaseModel):
    """Everything the verifier decided about one candidate."""

    passed: bool
    stage_failed: Stage | None = None
    findings: list[Finding] = Field(default_factory=list)
    correctness: list[CorrectnessReport] = Field(default_factory=list)
    timing: Timing | None = None
    timings: dict[str, Timing] = Field(default_factory=dict)
    speed_measured: bool = False
    speed_note: str = ""
    bad_input: bool = False
    device: str = ""
    seconds: float = 0.0

    def summary(self) -> str:
        if self.passed:
            speed = f"{self.timing.speedup:.3f}x" if self.timing else self.speed_note or "speed not measured"
            return f"passed ({speed})"
        reasons = "; ".join(f.render() for f in self.findings[:3]) or "failed"
        return f"failed at {self.stage_failed}: {reasons}"

    def feedback(self, limit: int = 6) -> str:
        """The structured failure a proposer gets to refine from."""
        lines = [f"verdict: {'passed' if self.passed else 'FAILED at ' + str(self.stage_failed)}"]
        lines += [f"- {f.render()}" for f in self.findings[:limit]]
        for report in self.correctness:
            for trial in report.trials:
                for c in trial.comparisons:
                    if not c.passed:
                        lines.append(f"- {report.variant}/{trial.label}/{c.name}: max_abs_err={c.max_abs_err}, "
                                     f"{c.mismatches}/{c.numel} elements out of tolerance "
                                     f"(rtol={report.rtol}, atol={report.atol}); first bad index {c.first_bad_index}"
                                     + (f"; {c.note}" if c.note else ""))
        if self.timing:
            t = self.timing
            lines.append(f"- timing: candidate {t.candidate_ms:.4f} ms vs baseline {t.baseline_ms:.4f} ms, "
                         f"speedup {t.speedup:.3f}x (noise margin {t.margin:.1%})")
        return "\n".join(lines)
