"""The verifier's records: what was checked, what passed, what failed, with figures.

Every verdict the product reports is one of these, stored as JSON in the run store. They are built
in the parent from what the reference process measured; nothing here comes from the candidate's
process except the figures its harness reports (launch counts, torch work, timings), which the
parent checks before believing (docs/VERIFIER.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from xe_forge.verify.clock import ClockCheck

Stage = Literal["static", "import", "correctness", "unseen", "launch", "ghost", "audit", "timing", "worker", "input",
                "unverifiable"]
# the reference's degenerate flag that makes a verdict "cannot verify": its output ignores inputs and weights
CONSTANT_REFERENCE = "output is the same for every input and weights tried"
Weights = Literal["initial", "perturbed"]
# Verdict.timings keys (verify/speed.py files each timing under its baseline's key) -> how a person names it
BASELINE_NAMES = {"input kernel": "input kernel", "eager": "eager PyTorch", "torch.compile": "torch.compile (default)",
                  "lowering": "Triton-only lowering (TorchInductor)"}


def baseline_name(key: str) -> str:
    """What a timing key names, as printed: 'eager' -> 'eager PyTorch'."""
    return BASELINE_NAMES.get(key, key)


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
    degenerate: bool = False  # the reference's output here is near zero or constant (compare.degenerate)


class TrialResult(BaseModel):
    label: str
    passed: bool
    weights: str = "initial"  # "initial", "perturbed", or "perturbed <param>" in a diagnosis
    inputs: str = "problem"  # "problem" (its own distribution) or "signed"
    comparisons: list[Comparison] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


class AuditSummary(BaseModel):
    """Torch work seen at the dispatch level during the candidate's calls at one shape (per call, worst)."""

    calls: int = 0
    torch_flops: float = 0.0  # compute outside Triton that no allowance covers
    allowed_flops: float = 0.0  # compute under a declared allowance (`--allow-torch`, spec allow_torch)
    allowed_families: dict[str, float] = Field(default_factory=dict)  # that compute per family (gemm, conv, ...)
    movement_bytes: float = 0.0  # copies, concatenation, casts: data movement, not compute
    compute_ops: dict[str, int] = Field(default_factory=dict)  # aten op -> calls, allowed or not
    refused_ops: dict[str, int] = Field(default_factory=dict)  # aten op -> calls no allowance covers
    device_to_host: list[str] = Field(default_factory=list)
    host_exits: list[str] = Field(default_factory=list)  # numpy()/tolist(): data handed to host Python
    foreign_kernels: list[str] = Field(default_factory=list)  # GPU kernels from neither Triton nor allowed torch
    kernel_list: str = ""  # "checked", "skipped: why", or "" where the device has none


class CorrectnessReport(BaseModel):
    variant: str  # "ci", or "unseen 2": unseen shapes are numbered, their dims kept apart
    dtype: str
    rtol: float
    atol: float
    trials: list[TrialResult] = Field(default_factory=list)
    launches: int = 0
    ghost_changed: bool | None = None
    degenerate: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    unseen: bool = False
    dims: dict[str, int | float] = Field(default_factory=dict)  # shown to users, never in proposer feedback
    inputs: list[str] = Field(default_factory=list)  # the input distributions used, described
    frozen: dict[str, str] = Field(default_factory=dict)  # dims no unseen shape varied, and why
    eval_refused: str | None = None  # the kernel raised NotImplementedError in eval mode: that mode is not checked
    tiles: list[int] = Field(default_factory=list)  # integer constexprs the kernel launched with here
    flags: list[str] = Field(default_factory=list)  # bool constexprs the kernel launched with here ("k.EVEN_K=True")
    audit: AuditSummary | None = None
    notes: list[str] = Field(default_factory=list)
    kernels: list[str] = Field(default_factory=list)
    """The Triton kernels the checked calls launched (the harness's launch count, by name): what a report
    says about which path of a port served this shape. Descriptive only, never part of the verdict."""

    @property
    def passed(self) -> bool:
        return not self.findings and all(t.passed for t in self.trials)


class Timing(BaseModel):
    """A candidate timed against a baseline: each in its own process, chunks of repetitions alternating,
    every repetition on fresh inputs (verify/timing.py); `clock` is the parent's own evidence."""

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
    clock: ClockCheck | None = None

    @property
    def tflops(self) -> float | None:
        return None if not self.flops else self.flops / (self.candidate_ms * 1e-3) / 1e12

    @property
    def gbps(self) -> float | None:
        return None if not self.bytes else self.bytes / (self.candidate_ms * 1e-3) / 1e9


class Versus(BaseModel):
    """One more baseline for the same timing run: every side is timed against the candidate, in turn."""

    label: str  # the Verdict.timings key: "eager", "torch.compile", "lowering", ...
    kind: Literal["eager", "compile", "input"]
    source: str | None = None  # the kernel's text, for kind "input"


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
    notes: list[str] = Field(default_factory=list)  # what the user should know: skipped checks, caveats
    # where `seconds` went: "<worker> <request>" -> seconds (judge Prepare, runner Run, runner TimePlan, ...)
    phase_seconds: dict[str, float] = Field(default_factory=dict)

    def timed_against(self) -> str:
        """The baseline `timing` was measured against, named: it is the first of `timings` (verify/speed.py)."""
        key = next((k for k, t in self.timings.items() if t is self.timing), next(iter(self.timings), None))
        return baseline_name(key) if key else "its baseline"

    def summary(self) -> str:
        """'passed (kernel vs eager PyTorch: 1.234x)': a ratio names what it was timed against."""
        if self.passed:
            speed = (f"kernel vs {self.timed_against()}: {self.timing.speedup:.3f}x" if self.timing
                     else self.speed_note or "speed not measured")
            return f"passed ({speed})"
        reasons = "; ".join(f.render() for f in self.findings[:3]) or "failed"
        return f"failed at {self.stage_failed}: {reasons}"

    def feedback(self, limit: int = 6) -> str:
        """The structured failure a proposer gets to refine from (unseen shapes by number, never dims)."""
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
            lines.append(f"- timing: candidate {t.candidate_ms:.4f} ms vs {self.timed_against()} {t.baseline_ms:.4f} ms, "
                         f"speedup {t.speedup:.3f}x (noise margin {t.margin:.1%})")
        return "\n".join(lines)
