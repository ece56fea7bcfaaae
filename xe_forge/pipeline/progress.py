"""Live progress of a run: printed lines (phase, stage, candidate, verdict, best speedup, tokens) and,
on a terminal, a one-line live status naming what is running now and for how long.

The lines go to stderr and stay in logs; the live status is redrawn in place and is shown only on a
terminal and never under `--json`, so pipes and CI logs get the lines alone.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from xe_forge.pipeline.status import CORRECT_UNTIMED, stage_result
from xe_forge.terminal import make_console

if TYPE_CHECKING:
    from xe_forge.pipeline.analyze import Issue
    from xe_forge.pipeline.cover import CandidateRecord, StageOutcome
    from xe_forge.pipeline.ratios import Ratio
    from xe_forge.proposers.llm import LLMCall
    from xe_forge.proposers.llm.profile import ModelProfile

RAISE_TIMEOUT = "--timeout SECONDS or XE_FORGE_TIMEOUT raises it"


class LiveStatus:
    """One status line redrawn in place: the phase, its elapsed time, and the limit it runs under.

    `phase()` may be called from any thread; nothing is drawn unless the console is a terminal.
    """

    def __init__(self, console: Console, *, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled
        self._text = ""
        self._limit: float | None = None
        self._since = time.monotonic()
        self._status: Status | None = None
        self._lock = threading.Lock()

    @property
    def showing(self) -> bool:
        return self._status is not None

    def phase(self, text: str, *, limit: float | None = None) -> None:
        """What runs now; `limit`: the seconds it may take before it is killed (shown beside the clock)."""
        with self._lock:
            self._text, self._limit, self._since = text, limit, time.monotonic()
            if self._status is None and self.enabled and self.console.is_terminal:
                self._status = Status(self, console=self.console, spinner="dots", refresh_per_second=4)
                self._status.start()

    def stop(self) -> None:
        with self._lock:
            if self._status is not None:
                self._status.stop()
                self._status = None

    def render(self) -> Text:
        """The clock first, so a narrow terminal cuts the phase's tail, never the time."""
        elapsed = time.monotonic() - self._since
        limit = f" of {self._limit:.0f} s (--timeout)" if self._limit else ""
        text = Text.assemble((f"{elapsed:.0f} s", "bold"), (limit, "dim"), "  ", self._text)
        text.no_wrap, text.overflow = True, "ellipsis"
        return text

    def __rich__(self) -> Text:
        return self.render()

    def __enter__(self) -> LiveStatus:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class Progress:
    """The optimize run's display: one printed line per event, plus the live status on a terminal."""

    def __init__(self, console: Console | None = None, *, quiet: bool = False) -> None:
        self.console = console or make_console(stderr=True)
        self.quiet = quiet
        self.status = LiveStatus(self.console, enabled=not quiet)
        self.timeout: float | None = None  # seconds one evaluation may take (shown in the live status)
        self.best = 1.0
        self.improved = 0
        self.unmeasured = 0  # improvements whose speed was not measured (CPU)
        self.tokens = 0
        self._stage = ""
        self.cost: float | None = 0.0
        self._stage_from: tuple[int, float | None] = (0, 0.0)  # tokens and cost when the stage started

    def _print(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text, highlight=False)

    def phase(self, name: str, detail: str) -> None:
        self._print(f"[bold]{name}[/bold]: {escape(detail)}")
        self.status.phase(f"{name}: {detail}", limit=self.timeout if name in ("baseline", "final_verify") else None)

    def issues(self, issues: list[Issue]) -> None:
        if not issues:
            self._print("  no issue found")
            return
        self._print(f"  {len(issues)} issue(s): " + ", ".join(sorted({f'{i.stage}/{i.kind}' for i in issues})))

    def plan(self, plan: list[str]) -> None:
        self._print(f"[bold]plan[/bold]: {' -> '.join(plan) if plan else 'nothing to do'}")

    def stage_start(self, name: str, index: int, total: int) -> None:
        self._stage = f"stage {index}/{total} {name}"
        self._stage_from = (self.tokens, self.cost)
        self._print(f"[bold cyan]{self._stage}[/bold cyan]")
        self._candidate(1)

    def _candidate(self, n: int) -> None:
        self.status.phase(f"{self._stage}: candidate {n} (proposed, then verified)", limit=self.timeout)

    def candidate(self, stage: str, record: CandidateRecord) -> None:
        mark = "[green]accepted[/green]" if record.accepted else ("passed" if record.passed else "[red]rejected[/red]")
        speed = f" {record.speedup:.3f}x vs the stage's input kernel" if record.speedup else ""
        why = "" if record.passed else f": {escape(record.summary[:160])}"  # '[check]' tags, not markup
        self._print(f"  {stage} iter {record.iteration} ({record.source}:{record.recipe}) {mark}{speed}{why}")
        self._candidate(record.iteration + 1)

    def best_so_far(self) -> str:
        """Never a number that was not measured: 1.000x would claim a measurement of no change."""
        if not self.improved:
            return "no improvement yet"
        if self.unmeasured:
            return CORRECT_UNTIMED
        return f"output {self.best:.3f}x vs the input kernel (product of the stages' measured ratios)"

    def stage_done(self, outcome: StageOutcome) -> None:
        if outcome.improved:
            self.improved += 1
            if outcome.speed_verified and outcome.speedup:
                self.best *= outcome.speedup
            else:
                self.unmeasured += 1
        tokens, cost = self._stage_from
        usage = "" if not self.tokens else (f"; LLM this stage {self.tokens - tokens} tokens, "
                                            f"{_usd(self.cost, cost)}, run {self.tokens} tokens, {_usd(self.cost)}")
        note = f" ({escape(outcome.note)})" if outcome.note else ""
        self._print(f"  -> {outcome.stage}: {stage_result(outcome.improved, outcome.speed_verified)}{note}; "
                    f"best so far: {self.best_so_far()}{usage}")

    def model(self, profile: ModelProfile) -> None:
        temperature = "provider default" if profile.temperature is None else f"{profile.temperature:g}"
        effort = f", reasoning effort {profile.reasoning_effort}" if profile.reasoning_effort else ""
        self._print(f"[bold]llm[/bold]: {escape(profile.model)} ({'reasoning' if profile.reasoning else 'plain'} model; "
                    f"temperature {temperature}, answers up to {profile.max_tokens} tokens{effort}, timeout "
                    f"{profile.timeout:.0f} s; {profile.prices()})")

    def llm_call(self, call: LLMCall) -> None:
        if not call.cached:
            self.tokens += call.prompt_tokens + call.completion_tokens
            self.cost = None if self.cost is None or call.cost is None else self.cost + call.cost
        if call.error:
            then = f"; retrying in {call.retry_in:.0f} s" if call.retry_in is not None else ""
            self._print(f"  [yellow]llm {call.purpose}[/yellow]: {escape(call.error[:300])}{then}")

    def close(self) -> None:
        self.status.stop()


def _usd(now: float | None, before: float | None = 0.0) -> str:
    return "cost unknown" if now is None or before is None else f"${now - before:.4f}"


class _Problem(Protocol):
    """A batch problem as the lines show it (batch.models.ProblemFile; the batch sits above the pipeline)."""

    name: str


class _Result(Protocol):
    """A problem's result as the lines show it (batch.models.ProblemResult)."""

    status: str
    reason: str
    ratios: list[Ratio]


class BatchProgress:
    """One line per problem started and finished, with a running count; a live status on a terminal."""

    def __init__(self, console: Console | None = None, *, quiet: bool = False) -> None:
        self.console = console or make_console(stderr=True)
        self.quiet = quiet
        self.status = LiveStatus(self.console, enabled=not quiet)
        self.total = self.done = 0
        self._running: dict[int, str] = {}
        self._lock = threading.Lock()

    def _print(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text, highlight=False)

    def start(self, total: int, already: int, workers: int) -> None:
        self.total, self.done = total, already
        self._print(f"[bold]batch[/bold]: {total} problems, {already} already finished, {workers} worker(s)")

    def _show(self) -> None:
        running = ", ".join(f"worker {w}: {name}" for w, name in sorted(self._running.items()))
        self.status.phase(f"[{self.done}/{self.total}] running {running or 'nothing'}")

    def problem_started(self, problem: _Problem, worker: int) -> None:
        with self._lock:
            self._running[worker] = problem.name
            self._print(f"  worker {worker}: {escape(problem.name)} ...")
            self._show()

    def problem_done(self, problem: _Problem, result: _Result) -> None:
        with self._lock:
            self.done += 1
            self._running = {w: name for w, name in self._running.items() if name != problem.name}
            eager = next((r for r in result.ratios if r.baseline == "eager"), None)
            speed = f", {eager.label}: {eager.timing.speedup:.3f}x" if eager else ""
            reason = f" ({escape(result.reason[:100])})" if result.reason else ""
            self._print(f"[{self.done}/{self.total}] {escape(problem.name)}: {result.status}{speed}{reason}")
            self._show()

    def close(self) -> None:
        self.status.stop()
