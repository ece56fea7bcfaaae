"""`kb add`: put a validated entry file (and its example kernels) into the user's KB directory.

Entries are validated against the whole effective knowledge base first, so an added entry cannot
contradict a bundled one, and an id that already exists is refused unless the user asks to replace it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from xe_forge.errors import InputError
from xe_forge.kb.loader import load_kb, read_layer
from xe_forge.kb.validate import validate_paths


def _list_problems(problems: list) -> str:
    shown = "\n  ".join(str(p) for p in problems[:10])
    more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
    return f"\n  {shown}{more}"


def _copy(src: Path, dest: Path, replace: bool) -> None:
    if dest.exists() and dest.resolve() == src.resolve():
        return
    if dest.exists() and not replace and dest.read_bytes() != src.read_bytes():
        raise InputError(f"{dest} already exists", hint="pass --replace to overwrite it")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def add_entry_file(file: Path, user_dir: Path, replace: bool = False) -> list[str]:
    """Validate `file`, then copy it and the example files it names into `user_dir`.

    Returns the ids added. Raises InputError when the file has problems, when an id already exists
    (unless `replace`), or when a replaced id lives in another file of `user_dir` (edit that file).
    """
    file = Path(file)
    if not file.is_file():
        raise InputError(f"no such entry file: {file}")
    current = load_kb()
    problems = validate_paths([file], context=current.entries)
    if problems:
        raise InputError(f"{file} has {len(problems)} problem(s):{_list_problems(problems)}")
    entries, _ = read_layer(file)
    if not entries:
        raise InputError(f"{file} holds no entries")
    ids = [e.id for e in entries]
    clash = [i for i in ids if current.get(i) is not None]
    if clash and not replace:
        raise InputError(f"id(s) already in the knowledge base: {', '.join(clash)}",
                         hint="pass --replace to override them, or choose new ids")
    dest = user_dir / file.name
    if user_dir.is_dir():
        elsewhere = [e for e in read_layer(user_dir)[0]
                     if e.id in ids and e.file is not None and e.file.resolve() != dest.resolve()]
        if elsewhere:
            where = ", ".join(f"'{e.id}' in {e.where}" for e in elsewhere)
            raise InputError(f"cannot replace {where}: it lives in another file of {user_dir}",
                             hint="edit or remove that entry there")
    for entry in entries:
        if entry.example and not Path(entry.example.path).is_absolute():
            _copy(entry.example_file(), user_dir / entry.example.path, replace)
    _copy(file, dest, replace)
    return ids
