"""`kb validate`: every problem of a set of entry files, each with file and line.

Schema errors, duplicate ids, unknown stages and targets, bad toolchain ranges, constraint and fact
entries without provenance (a `verified_on`), sources a reader cannot open (kb/sources.py),
example kernels that do not import under the interpreter, and contradictions between entries (option
lists, fact values, configs a constraint forbids). Example files are imported
in one child process (TRITON_INTERPRET=1), so a broken example cannot disturb the caller, and torch
is imported once for all of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from xe_forge.kb.consistency import contradictions
from xe_forge.kb.loader import read_layer
from xe_forge.kb.schema import VERIFIED_ON, Entry, KbProblem
from xe_forge.kb.sources import check_source

IMPORT_TIMEOUT_S = 180
REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")

# Runs in the child: import each file by path, report what failed or is missing, as JSON on stdout.
_IMPORT_SCRIPT = r"""
import importlib.util, json, sys, traceback
names = sys.argv[1].split(",")
results = {}
for i, path in enumerate(sys.argv[2:]):
    try:
        spec = importlib.util.spec_from_file_location(f"_xe_forge_kb_example_{i}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        missing = [n for n in names if not hasattr(module, n)]
        results[path] = f"does not define {', '.join(missing)}" if missing else None
    except BaseException as err:
        results[path] = f"does not import: {type(err).__name__}: {err}".splitlines()[0][:300]
print("@@RESULTS@@" + json.dumps(results))
"""


def import_examples(files: list[Path]) -> dict[Path, str | None]:
    """Import each example under the interpreter in a child process: path -> error (None: fine)."""
    if not files:
        return {}
    env = dict(os.environ, TRITON_INTERPRET="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    cmd = [sys.executable, "-c", _IMPORT_SCRIPT, ",".join(REQUIRED_NAMES), *map(str, files)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=IMPORT_TIMEOUT_S,
                              cwd=str(files[0].parent))
    except subprocess.TimeoutExpired:
        return {f: f"importing the examples took longer than {IMPORT_TIMEOUT_S} s" for f in files}
    marker = done.stdout.rfind("@@RESULTS@@")
    if marker < 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {f: f"the import check crashed: {tail[0]}" for f in files}
    results = json.loads(done.stdout[marker + len("@@RESULTS@@"):])
    return {Path(path): error for path, error in results.items()}


def example_problems(entries: list[Entry]) -> list[KbProblem]:
    problems: list[KbProblem] = []
    to_import: dict[Path, Entry] = {}
    for entry in entries:
        path = entry.example_file()
        if path is None:
            continue
        if not path.is_file():
            problems.append(KbProblem(file=entry.file or path, line=entry.line,
                                    message=f"entry '{entry.id}': example file {entry.example.path} not found"))
        else:
            to_import[path.resolve()] = entry
    for path, error in import_examples(sorted(to_import)).items():
        if error is not None:
            entry = to_import[path.resolve()]
            problems.append(KbProblem(file=entry.file or path, line=entry.line,
                                    message=f"entry '{entry.id}': example {entry.example.path} {error}"))
    return problems


def provenance_problems(entries: list[Entry], known_ids: Iterable[str] = ()) -> list[KbProblem]:
    """Every entry must cite something a reader can open; constraints and facts must also say how they
    were checked.

    A source names a URL, a file of this repository or another entry's id (`kb/sources.py`); a note
    kept outside the repository (`xpu-facts.md`) is a problem even next to a URL. A fact (a
    machine-checked `facts:` key) needs a document of its own: a URL or a repository file, not only
    another entry's id. An example entry's kernel file is its own source ("own code").
    """
    ids = {e.id for e in entries} | set(known_ids)
    problems: list[KbProblem] = []
    for entry in entries:
        where = entry.file or Path("<memory>")
        if (entry.kind == "constraint" or entry.facts) and entry.verified_on is None:
            problems.append(KbProblem(file=where, line=entry.line, message=(
                f"entry '{entry.id}' states {'facts' if entry.facts else 'a constraint'} but has no verified_on "
                f"(one of: {', '.join(repr(v) for v in VERIFIED_ON)})")))
        check = check_source(entry.source, ids - {entry.id})
        for trouble in check.problems:
            problems.append(KbProblem(file=where, line=entry.line, message=f"entry '{entry.id}' source: {trouble}"))
        own_kernel = entry.example is not None  # an example cites itself: its kernel file is in the entry
        if not check.problems and not check.openable and not own_kernel:
            problems.append(KbProblem(file=where, line=entry.line, message=(
                f"entry '{entry.id}' source names no URL, file of this repository or entry id a reader can open")))
        if entry.facts and not check.documents:
            problems.append(KbProblem(file=where, line=entry.line, message=(
                f"entry '{entry.id}' states facts ({', '.join(f.key for f in entry.facts)}) but its source has no "
                "URL (or repository file) a reviewer can open")))
    return problems


def validate_paths(paths: Iterable[Path], *, context: Iterable[Entry] = (),
                   import_check: bool = True) -> list[KbProblem]:
    """Every problem in the entry files under `paths`, treated as one layer.

    Args:
        paths: YAML files or directories (searched recursively).
        context: entries of other layers (e.g. the bundled KB when validating a user directory); they
            take part in the contradiction checks, overridden by id, but their own problems are not
            reported.
        import_check: import example kernels under the interpreter (slow: one child process).
    """
    problems: list[KbProblem] = []
    entries: list[Entry] = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            problems.append(KbProblem(file=path, line=0, message="no such file or directory"))
            continue
        found, trouble = read_layer(path)
        entries.extend(found)
        problems.extend(trouble)
    seen: dict[str, Entry] = {}
    for entry in entries:  # duplicates across the given paths (read_layer caught those within one)
        if entry.id in seen and seen[entry.id] is not entry:
            problems.append(KbProblem(file=entry.file or Path("?"), line=entry.line,
                                    message=f"duplicate id '{entry.id}' (first defined at {seen[entry.id].where})"))
        seen.setdefault(entry.id, entry)
    problems.extend(provenance_problems(entries, known_ids=[e.id for e in context]))
    if import_check:
        problems.extend(example_problems(entries))
    own = {id(e) for e in entries}
    merged = {e.id: e for e in context}
    merged.update({e.id: e for e in entries})
    for finding in contradictions(list(merged.values())):
        mine = [e for e in finding.involved if id(e) in own]
        if mine:  # findings among context entries only are not this layer's to report
            problems.append(finding.at(mine[0]))
    return sorted(problems, key=lambda p: (str(p.file), p.line, p.message))
