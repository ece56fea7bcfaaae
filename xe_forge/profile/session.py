"""Profiling inside an optimize run (`--profile`): one profile per distinct kernel, kept on disk.

The pipeline calls the hook functions at the bottom with its run context; each is a no-op unless the
run asked for profiles (`RunContext.profiler` holds a ProfileSession). The hooks ask of that context
only what `ProfiledRun` names, so this package never imports the pipeline that drives it. Profiles are written to
runs/<id>/profiles/<hash>.json, so a resumed run reads them back instead of profiling again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from xe_forge.problem.kernel import Problem
from xe_forge.problem.roofline import problem_facts
from xe_forge.profile.collect import profile_source
from xe_forge.profile.feedback import Preferences, preferences, render_feedback, steer_plan
from xe_forge.profile.limiter import diagnose
from xe_forge.profile.models import ProfileEntry, ProfileRecord, ProfileSummary, SteeringNote
from xe_forge.profile.steer import SteeredRules
from xe_forge.proposers.base import Proposer
from xe_forge.toolchain import Toolchain


class PhaseReporter(Protocol):
    def phase(self, name: str, text: str) -> None: ...


class ProfiledRun(Protocol):
    """What the hooks read from the pipeline's RunContext (which satisfies it as it is)."""

    profiler: ProfileSession | None
    progress: PhaseReporter | None
    only_stages: Any
    rules: Any
    target: str
    toolchain: Toolchain


class ProfileSession:
    """The run's profiler: device, target and timeout fixed; results cached by code hash."""

    def __init__(self, problem: Problem, *, device: str, target: str, run_dir: Path, timeout: float = 300.0,
                 tool: str | None = None) -> None:
        self.problem = problem
        self.device = device
        self.target = target
        self.timeout = timeout
        self.tool = tool
        self.dir = Path(run_dir) / "profiles"
        self.entries: dict[str, ProfileEntry] = {}
        saved = self.dir / "steering.json"
        self.steering = [SteeringNote(**n) for n in json.loads(saved.read_text())] if saved.is_file() else []
        self.blocked: ProfileRecord | None = None  # the machine's refusal, reused instead of asking again

    def entry(self, code: str, label: str) -> ProfileEntry:
        key = hashlib.sha256(code.encode()).hexdigest()[:12]
        if key in self.entries:
            return self.entries[key]
        path = self.dir / f"{key}.json"
        if path.is_file():
            entry = ProfileEntry.model_validate_json(path.read_text())
        else:
            self.dir.mkdir(parents=True, exist_ok=True)
            record = self.blocked or profile_source(code, self.problem, device=self.device, target=self.target,
                                                    timeout=self.timeout, tool=self.tool, workdir=self.dir / "tmp",
                                                    keep_raw=self.dir / f"{key}.raw.txt")
            diagnosis = diagnose(record, problem_facts(self.problem, self.target))
            entry = ProfileEntry(label=label, code_hash=key, record=record, diagnosis=diagnosis,
                                 feedback=render_feedback(record, diagnosis))
            path.write_text(entry.model_dump_json(indent=2))
        self.entries[key] = entry
        if entry.record.blocked:
            self.blocked = entry.record
        return entry

    def preferences(self, code: str, label: str) -> Preferences | None:
        limiter = self.entry(code, label).diagnosis.limiter
        return None if limiter == "unknown" else preferences(limiter, self.target)

    def save_steering(self) -> None:
        if self.steering:
            self.dir.mkdir(parents=True, exist_ok=True)
            (self.dir / "steering.json").write_text("[" + ",\n".join(n.model_dump_json() for n in self.steering) + "]\n")

    def summary(self, final_code: str | None) -> ProfileSummary:
        """The run report's profile: profiles the output first if it is a kernel not seen yet."""
        if final_code:
            self.entry(final_code, "output")
        self.save_steering()
        return ProfileSummary(device=self.device, target=self.target, entries=list(self.entries.values()),
                              steering=self.steering)


def _say(ctx: ProfiledRun, entry: ProfileEntry) -> None:
    if ctx.progress is not None:
        what = entry.record.unavailable and f"unavailable: {entry.record.unavailable}"
        ctx.progress.phase("profile", f"{entry.label}: {what or entry.diagnosis.limiter}")


# ---------------------------------------------------------------- hooks the pipeline calls

def on_input(ctx: ProfiledRun, code: str) -> None:
    """Profile the input kernel once it passed its baseline check."""
    session = ctx.profiler
    if session is not None:
        _say(ctx, session.entry(code, "input"))


def steer_planned(ctx: ProfiledRun, plan: list[str], code: str, can_serve: Callable[[str], bool]) -> list[str]:
    """The input's limiter puts its stages first (the user's --stages is never changed)."""
    session = ctx.profiler
    if session is None or ctx.only_stages:
        return plan
    prefs = session.preferences(code, "input")
    return steer_plan(plan, prefs, can_serve) if prefs else plan


def stage_feedback(ctx: ProfiledRun, code: str, stage: str) -> str:
    """The profiler's text block for this stage's prompts ('' without --profile)."""
    session = ctx.profiler
    if session is None:
        return ""
    session.save_steering()  # the previous stage's candidate orders, kept even if the run stops here
    entry = session.entry(code, f"before {stage}")
    _say(ctx, entry)
    return "" if entry.record.unavailable and entry.diagnosis.limiter == "unknown" else entry.feedback


def stage_proposers(ctx: ProfiledRun, code: str, stage: str, proposers: list[Proposer]) -> list[Proposer]:
    """The rules proposer steered by the current kernel's limiter; other proposers unchanged."""
    session = ctx.profiler
    rules = ctx.rules
    if session is None or rules is None:
        return proposers
    prefs = session.preferences(code, f"before {stage}")
    if prefs is None:
        return proposers
    steered = SteeredRules(rules, prefs, ctx.target, ctx.toolchain, notes=session.steering)
    return [steered if p is rules else p for p in proposers]

