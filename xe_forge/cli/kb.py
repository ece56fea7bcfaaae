"""`xe-forge kb ...`: thin commands over the knowledge-base library (parse, call, print), and `kb distill`."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markdown import Markdown
from rich.table import Table

from xe_forge.cli.common import console, run_command, settings_from_flags
from xe_forge.errors import InputError
from xe_forge.kb.loader import KnowledgeBase, bundled_dir, default_user_dir, load_kb, read_layer
from xe_forge.kb.render import render_entries, render_entry
from xe_forge.kb.retrieve import fit_budget, rank
from xe_forge.kb.schema import KINDS
from xe_forge.kb.userkb import add_entry_file
from xe_forge.kb.validate import validate_paths
from xe_forge.stages import stage_names
from xe_forge.targets.base import TARGETS, Toolchain

kb_app = typer.Typer(help="Browse, search, validate and extend the knowledge base.", no_args_is_help=True)

KbDirs = Annotated[list[Path] | None, typer.Option("--kb", help="Extra KB directory (repeatable), layered last.")]
StageOpt = Annotated[str | None, typer.Option("--stage", help=f"One of: {', '.join(stage_names())}.")]
TargetOpt = Annotated[str | None, typer.Option("--target", help=f"One of: {', '.join(TARGETS)}.")]


def _reports_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The CLI's one error path (a ForgeError becomes one line and its exit code), for a command."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return run_command(fn, *args, **kwargs)

    return wrapper


def _check_choice(value: str | None, choices: tuple[str, ...], what: str) -> None:
    if value is not None and value not in choices:
        raise InputError(f"unknown {what} '{value}'", hint=f"choose one of: {', '.join(choices)}")


def parse_toolchain(text: str | None) -> Toolchain | None:
    """'triton-xpu 3.7.2', 'triton-xpu==3.7.2' or 'triton==3.9.0' -> Toolchain."""
    if text is None:
        return None
    match = re.fullmatch(r"\s*(triton-xpu|triton)\s*(?:==?|\s)\s*([0-9][\w.+]*)\s*", text)
    if not match:
        raise InputError(f"cannot read toolchain '{text}'", hint="write it like 'triton-xpu==3.7.2'")
    return Toolchain(name=match.group(1), version=match.group(2))  # type: ignore[arg-type]


def _load(kb_dirs: list[Path] | None) -> KnowledgeBase:
    return load_kb(list(kb_dirs or []))


@kb_app.command("list")
@_reports_errors
def list_entries(stage: StageOpt = None, target: TargetOpt = None,
                 kind: Annotated[str | None, typer.Option(help=f"One of: {', '.join(KINDS)}.")] = None,
                 kb: KbDirs = None) -> None:
    """List entries, optionally for one stage, target and kind."""
    _check_choice(stage, stage_names(), "stage")
    _check_choice(target, TARGETS, "target")
    _check_choice(kind, KINDS, "kind")
    entries = _load(kb).filter(stage=stage, target=target, kind=kind)
    table = Table()
    table.add_column("id", no_wrap=True)
    for name in ("kind", "stages", "targets", "toolchain", "title"):
        table.add_column(name)
    for e in entries:
        table.add_row(e.id, e.kind, ",".join(e.stages), ",".join(e.targets), e.toolchain or "", e.title)
    console.print(table)
    console.print(f"{len(entries)} entries")


@kb_app.command("show")
@_reports_errors
def show(entry_id: Annotated[str, typer.Argument(metavar="ID")], kb: KbDirs = None) -> None:
    """Show one entry as the prompt sees it, with its source and location."""
    entry = _load(kb).get(entry_id)
    if entry is None:
        raise InputError(f"no entry with id '{entry_id}'", hint="`xe-forge kb list` or `kb search` finds ids")
    console.print(Markdown(render_entry(entry)))
    verified = f"\nverified on: {entry.verified_on}" if entry.verified_on else ""
    console.print(f"source: {entry.source}{verified}\nfile: {entry.where}", markup=False, highlight=False)


@kb_app.command("search")
@_reports_errors
def search(query: str, stage: StageOpt = None, target: TargetOpt = None,
           toolchain: Annotated[str | None, typer.Option(help="e.g. 'triton-xpu==3.7.2'.")] = None,
           budget: Annotated[int, typer.Option(help="Token budget of what is shown with --full.")] = 2000,
           full: Annotated[bool, typer.Option("--full", help="Print the rendered entries.")] = False,
           kb: KbDirs = None) -> None:
    """Rank entries against QUERY by BM25 (what a stage's prompt would get)."""
    _check_choice(stage, stage_names(), "stage")
    _check_choice(target, TARGETS, "target")
    ranked = rank(_load(kb), query, stage=stage, target=target, toolchain=parse_toolchain(toolchain))
    if full:
        console.print(render_entries(fit_budget([e for e, _ in ranked], budget)), markup=False, highlight=False)
        return
    table = Table("score")
    table.add_column("id", no_wrap=True)
    table.add_column("kind")
    table.add_column("title")
    for entry, score in ranked:
        table.add_row(f"{score:.2f}", entry.id, entry.kind, entry.title)
    console.print(table)


@kb_app.command("validate")
@_reports_errors
def validate(paths: Annotated[list[Path] | None, typer.Argument(help="Files or directories; "
                                                                      "default: the bundled KB.")] = None,
             no_import: Annotated[bool, typer.Option("--no-import", help="Skip importing examples.")] = False,
             ) -> None:
    """Report every problem with file and line; exit 1 if there is any."""
    context = read_layer(bundled_dir())[0]
    problems = validate_paths(paths or [bundled_dir()], context=context, import_check=not no_import)
    for problem in problems:
        console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    if problems:
        console.print(f"{len(problems)} problem(s)")
        raise typer.Exit(code=1)
    console.print("no problems found")


@kb_app.command("add")
@_reports_errors
def add(file: Path,
        replace: Annotated[bool, typer.Option("--replace", help="Override entries with the same ids.")] = False,
        to: Annotated[Path | None, typer.Option("--dir", help="User KB directory (default: first of "
                                                               "XE_FORGE_KB_PATH, else ~/.xe-forge/kb).")] = None,
        ) -> None:
    """Validate FILE, then copy it (and its example kernels) into the user KB directory."""
    user_dir = to or default_user_dir()
    ids = add_entry_file(file, user_dir, replace)
    console.print(f"added {len(ids)} entr{'y' if len(ids) == 1 else 'ies'} to {user_dir}: {', '.join(ids)}",
                  markup=False, highlight=False)


@kb_app.command("distill")
@_reports_errors
def distill(
    run_id: Annotated[str, typer.Argument(help="Run whose verified wins become draft patterns.")],
    run_dir: Annotated[Path | None, typer.Option("--run-dir", help="Where run directories live. Default: "
                                                 "XE_FORGE_RUN_DIR, else runs/.")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Draft file (default: RUN/distilled.yaml).")] = None,
) -> None:
    """Turn a run's accepted candidates into draft knowledge-base patterns, for review."""
    from xe_forge.kb.distill import write_distilled

    path, n = write_distilled(settings_from_flags({"run_dir": run_dir}).run_dir / run_id, output)
    console.print(f"{n} draft entr{'y' if n == 1 else 'ies'} written to {path}; review, then `xe-forge kb add {path}`",
                  markup=False, highlight=False)
