"""Loading the knowledge base in layers: bundled, then the user's directories, later layers win by id.

A user extends or corrects the bundled knowledge without editing the installation: an entry with the
same id in a later layer replaces the bundled one. Within one layer an id must be unique, since there
is no order to decide which of two copies is meant.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from xe_forge.errors import InputError
from xe_forge.kb.reader import read_file, yaml_files
from xe_forge.kb.schema import Entry, KbProblem
from xe_forge.paths import data_dir
from xe_forge.toolchain import Toolchain

ENV_KB_PATH = "XE_FORGE_KB_PATH"
DEFAULT_USER_DIR = Path("~/.xe-forge/kb")


def bundled_dir() -> Path:
    return data_dir("knowledge_base")


def user_dirs() -> list[Path]:
    """The user layers: the directories of XE_FORGE_KB_PATH, else ~/.xe-forge/kb."""
    env = os.environ.get(ENV_KB_PATH, "")
    dirs = [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    return dirs or [DEFAULT_USER_DIR.expanduser()]


def default_user_dir() -> Path:
    """Where `kb add` copies entries: the first user layer."""
    return user_dirs()[0]


def target_admits(wanted: str, targets: Iterable[str]) -> bool:
    """Whether an entry for `targets` applies to `wanted`: its own name, `any`, and for an NVIDIA
    target also `nvidia-any`."""
    targets = set(targets)
    if wanted in targets or "any" in targets:
        return True
    return wanted.startswith("nvidia-") and "nvidia-any" in targets


class KnowledgeBase:
    """The merged entries of every layer, with the filters retrieval and the verifier need."""

    def __init__(self, entries: Iterable[Entry], layers: Iterable[Path] = ()) -> None:
        self.entries: list[Entry] = sorted(entries, key=lambda e: e.id)
        self.layers: list[Path] = list(layers)
        self._by_id = {entry.id: entry for entry in self.entries}

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, entry_id: str) -> Entry | None:
        return self._by_id.get(entry_id)

    def fact(self, key: str, target: str | None = None, toolchain: Toolchain | None = None) -> Any:
        """The value the entries give a fact key for `target` and `toolchain` (None: any); None when
        no entry states it. `kb validate` guarantees that entries applying together agree, so the
        first one found is the answer (version-ranged keys need the toolchain to be unambiguous)."""
        entry = self.fact_entry(key, target, toolchain)
        return None if entry is None else next(f.value for f in entry.facts if f.key == key)

    def fact_entry(self, key: str, target: str | None = None, toolchain: Toolchain | None = None) -> Entry | None:
        """The entry that states `key` for `target` and `toolchain`, so a message can name it."""
        for entry in self.filter(target=target, toolchain=toolchain):
            if any(fact.key == key for fact in entry.facts):
                return entry
        return None

    def filter(self, stage: str | None = None, target: str | None = None, kind: str | None = None,
               toolchain: Toolchain | None = None) -> list[Entry]:
        """Entries for a stage, target, kind and installed toolchain (None: no filter on that field).

        An entry without a toolchain range applies to every toolchain.
        """
        return [e for e in self.entries
                if (stage is None or stage in e.stages)
                and (target is None or target_admits(target, e.targets))
                and (kind is None or e.kind == kind)
                and (toolchain is None or toolchain.satisfies(e.toolchain))]


def read_layer(path: Path) -> tuple[list[Entry], list[KbProblem]]:
    """Every entry of one directory (or file), with the problems found reading it."""
    entries: list[Entry] = []
    problems: list[KbProblem] = []
    for file in yaml_files(path):
        found, trouble = read_file(file)
        entries.extend(found)
        problems.extend(trouble)
    first: dict[str, Entry] = {}
    for entry in entries:
        if entry.id in first:
            problems.append(KbProblem(file=entry.file or path, line=entry.line,
                                    message=f"duplicate id '{entry.id}' (first defined at {first[entry.id].where})"))
        else:
            first[entry.id] = entry
    return list(first.values()), problems


@lru_cache(maxsize=1)
def bundled_kb() -> KnowledgeBase:
    """The bundled knowledge base alone, read once per process (devices and the option table use it)."""
    return KnowledgeBase(_layer_or_fail(bundled_dir()), [bundled_dir()])


def _layer_or_fail(path: Path) -> list[Entry]:
    entries, problems = read_layer(path)
    if problems:
        shown = "\n  ".join(str(p) for p in problems[:5])
        more = f"\n  ... and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise InputError(f"knowledge base layer {path} has {len(problems)} problem(s):\n  {shown}{more}",
                         hint=f"run `xe-forge kb validate {path}`")
    return entries


def load_kb(extra_dirs: list[Path] | None = None) -> KnowledgeBase:
    """Bundled KB, then the user layers (XE_FORGE_KB_PATH or ~/.xe-forge/kb), then `extra_dirs`.

    Missing user layers are skipped (they may not exist before the first `kb add`); a missing
    `extra_dirs` directory, or any layer with problems, is an InputError.
    """
    layers = [bundled_dir()] + [d for d in user_dirs() if d.is_dir()]
    for extra in extra_dirs or []:
        if not extra.exists():
            raise InputError(f"knowledge base directory {extra} does not exist")
        layers.append(extra)
    merged: dict[str, Entry] = {}
    for layer in layers:
        for entry in _layer_or_fail(layer):
            merged[entry.id] = entry
    return KnowledgeBase(merged.values(), layers)
