"""Whether an entry's `source` is something a reader of the product can open.

A source is useful only if the person reviewing an entry can follow it: a web address (a file at a
tag or commit, an issue, a vendor page), a file of this repository (benchmarks/RESULTS.md,
knowledge_base/examples/...), a `file://` address of a local run record (what `kb distill` writes),
or the id of another entry, which carries its own source. Notes that live outside the repository
(a `*-facts.md` next to someone's checkout) are what this rejects: they read like citations but no
user can open them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from xe_forge.paths import data_dir

_URL = re.compile(r"\b(?:https?|file)://[^\s;,)\]]+")
# Top-level folders of this repository that a source may cite by relative path.
REPO_FOLDERS = ("benchmarks", "docs", "knowledge_base", "examples", "stages", "prompts", "xe_forge", "tests")
_REPO_PATH = re.compile(r"(?<![\w/.:-])((?:" + "|".join(REPO_FOLDERS) + r")/[\w./-]*[\w/])")
# A document named bare (`xpu-facts.md`, `DESIGN.md`): a file of the repository only if it exists.
_DOC_NAME = re.compile(r"(?<![\w/.:-])([\w.-]+\.(?:md|txt|rst))\b")
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_CHECKOUT = Path(__file__).resolve().parents[2]


def _repo_file(relative: str) -> Path | None:
    """The path of `relative` in this installation, None when it cannot be looked up here.

    Bundled folders (knowledge_base, examples, stages, prompts) resolve in a wheel too; the others
    only in a source checkout, so in a wheel such a path is accepted by its shape alone.
    """
    folder, _, rest = relative.partition("/")
    try:
        return data_dir(folder) / rest
    except FileNotFoundError:
        pass
    if (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / relative
    return None


@dataclass(frozen=True)
class SourceCheck:
    """What a source cites that a reader can open, and what it cites that nobody can."""

    documents: tuple[str, ...]
    """URLs and files of this repository (or a local run record)."""
    entry_ids: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def openable(self) -> bool:
        return not self.problems and bool(self.documents or self.entry_ids)


def check_source(source: str, known_ids: Iterable[str] = ()) -> SourceCheck:
    """Sort the references of one `source` text into openable ones and problems.

    Args:
        source: the entry's `source` text.
        known_ids: ids of the entries it may cite in place of a document.
    """
    documents: list[str] = []
    problems: list[str] = []
    for url in _URL.findall(source):
        if url.startswith("file://") and not Path(unquote(urlparse(url).path)).is_file():
            problems.append(f"{url} does not exist")
        else:
            documents.append(url)
    rest = _URL.sub(" ", source)
    for relative in _REPO_PATH.findall(rest):
        path = _repo_file(relative.rstrip("/"))
        if path is None or path.exists():
            documents.append(relative)
        else:
            problems.append(f"{relative} is not a file of this repository")
    rest = _REPO_PATH.sub(" ", rest)
    for name in _DOC_NAME.findall(rest):
        if not (_CHECKOUT / name).is_file():
            problems.append(f"{name} is not a file of this repository: cite its primary source instead")
    ids = set(known_ids)
    cited = tuple(dict.fromkeys(word for word in _WORD.findall(rest) if word in ids))
    return SourceCheck(tuple(documents), cited, tuple(problems))
