"""Live progress of a run: stage, iteration, verdict, best speedup so far, tokens spent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from xe_forge.batch.models import ProblemFile, ProblemResult
    from xe_forge.pipeline.analyze import Issue
    from xe_forge.pipeline.cover import CandidateRecord, StageOutcome
    from xe_forge.proposers.llm import LLMCall
    from xe_forge.proposers.llm.profile import ModelProfile


class Progress:
    def __init__(self, console: Console | None = None, *, quiet: bool = False) -> None:
        self.console = console or Console(stderr=True)
        self.quiet = quiet
        self.best = 1.0
        self.verified = True
        self.tokens = 0
        self.cost: float | None = 0.0
        self._stage_from: tuple[int, float | None] = (0, 0.0)  # tokens and cost when the stage started

    def _print(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text, highlight=False)

    def phase(self, name: str, detail: str) -> None:
        self._print(f"[bold]{name}[/bold]: {detail}")

    def issues(self, issues: list[Issue]) -> None:
        self._print(f"  {len(issues)} issue(s): " + ", ".join(sorted({f'{i.stage}/{i.kind}' for i in issues})))

    def plan(self, plan: list[str]) -> None:
        self._print(f"[bold]plan[/bold]: {' -> '.join(plan) if plan else 'nothing to do'}")

    def stage_start(self, name: str, index: int, total: int) -> None:
        self._stage_from = (self.tokens, self.cost)
        self._print(f"[bold cyan]stage {index}/{total}: {name}[/bold cyan]")

    def candidate(self, stage: str, record: CandidateRecord) -> None:
        mark = "[green]accepted[/green]" if record.accepted else ("passed" if record.passed else "[red]rejected[/red]")
        speed = f" {record.speedup:.3f}x" if record.speedup else ""
        self._print(f"  {stage} iter {record.iteration} ({record.source}:{record.recipe}) {mark}{speed}: "
                    f"{escape(record.summary[:160])}")  # summaries hold '[check]' tags, not markup

    def stage_done(self, outcome: StageOutcome) -> None:
        if outcome.improved:
            self.best *= outcome.speedup
            self.verified = self.verified and outcome.speed_verified
        best = f"{self.best:.3f}x" if self.verified else "verified correct, speed not measured"
        done = ("improved" if outcome.speed_verified else "changed, verified correct") if outcome.improved else \
            "kept its input"
        tokens, cost = self._stage_from
        usage = "" if not self.tokens else (f"; LLM this stage {self.tokens - tokens} tokens, "
                                            f"{_usd(self.cost, cost)}, run {self.tokens} tokens, {_usd(self.cost)}")
        self._print(f"  -> {outcome.stage}: {done}"
                    f"{' (' + escape(outcome.note) + ')' if outcome.note else ''}; best so far {best}{usage}")

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


def _usd(now: float | None, before: float | None = 0.0) -> str:
    return "cost unknown" if now is None or before is None else f"${now - before:.4f}"


class BatchProgress:
    """One line per problem started and finished, with a running count."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.total = self.done = 0

    def start(self, total: int, already: int, workers: int) -> None:
        self.total, self.done = total, already
        self.console.print(f"[bold]batch[/bold]: {total} problems, {already} already finished, {workers} worker(s)")

    def problem_started(self, problem: ProblemFile, worker: int) -> None:
        self.console.print(f"  worker {worker}: {problem.name} ...", highlight=False)

    def problem_done(self, problem: ProblemFile, result: ProblemResult) -> None:
        self.done += 1
        t = result.timings.get("eager")
        speed = f", {t.speedup:.3f}x vs eager" if t else ""
        reason = f" ({result.reason[:100]})" if result.reason else ""
        self.console.print(f"[{self.done}/{self.total}] {problem.name}: {result.status}{speed}{reason}",
                           highlight=False)
