"""Reading one YAML file of entries, keeping the line of every entry and field.

PyYAML's compose step gives nodes with start marks; the entries are validated from the same text, so a
schema error can be reported at the line of the field that caused it, not only of the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from xe_forge.kb.schema import Entry, KbProblem

YAML_SUFFIXES = (".yaml", ".yml")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser is ~10x faster when present


def yaml_files(path: Path) -> list[Path]:
    """The entry files under a directory (recursively, sorted so load order is stable), or the file."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file())
    return [path]


def _node_line(node: yaml.Node, loc: tuple[Any, ...]) -> int:
    """Follow a pydantic error location through the node tree; the deepest node found gives the line."""
    line = node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == str(part)), None)
            if pair is not None:  # report the key's line; a block value starts on the next one
                node, line = pair[1], pair[0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        # anything else is a union tag or a name pydantic adds: skip it, keep walking
    return line


def _duplicate_keys(node: yaml.Node) -> list[tuple[str, int]]:
    """Keys given twice in one mapping (YAML would silently keep the last)."""
    found: list[tuple[str, int]] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = getattr(key, "value", None)
            if isinstance(name, str):
                if name in seen:
                    found.append((name, key.start_mark.line + 1))
                seen.add(name)
            found.extend(_duplicate_keys(value))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found.extend(_duplicate_keys(item))
    return found


def _entry_nodes(root: yaml.Node | None, file: Path, problems: list[KbProblem]) -> list[yaml.Node]:
    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode):
        problems.append(KbProblem(file=file, line=root.start_mark.line + 1,
                                message="top level must be a mapping with an 'entries:' list"))
        return []
    keys = {getattr(k, "value", None): (k, v) for k, v in root.value}
    for name, (key, _) in keys.items():
        if name != "entries":
            problems.append(KbProblem(file=file, line=key.start_mark.line + 1,
                                    message=f"unknown top-level key '{name}' (only 'entries:' is allowed)"))
    if "entries" not in keys:
        problems.append(KbProblem(file=file, line=1, message="missing top-level 'entries:' list"))
        return []
    seq = keys["entries"][1]
    if not isinstance(seq, yaml.SequenceNode):
        problems.append(KbProblem(file=file, line=seq.start_mark.line + 1, message="'entries:' must be a list"))
        return []
    return list(seq.value)


def _format_error(error: dict[str, Any]) -> str:
    loc = ".".join(str(p) for p in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{loc}: {message}" if loc else message


def read_file(file: Path) -> tuple[list[Entry], list[KbProblem]]:
    """Parse and validate one file. Entries that fail validation are left out and reported."""
    problems: list[KbProblem] = []
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return [], [KbProblem(file=file, line=0, message=f"cannot read: {err}")]
    try:  # compose once (keeps line marks), then build the Python data from the same nodes
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        return [], [KbProblem(file=file, line=line, message=f"YAML syntax error: {getattr(err, 'problem', err)}")]
    nodes = _entry_nodes(root, file, problems)
    raw_items = data.get("entries") if isinstance(data, dict) and isinstance(data.get("entries"), list) else []
    entries: list[Entry] = []
    for node, raw in zip(nodes, raw_items, strict=False):
        line = node.start_mark.line + 1
        for key, key_line in _duplicate_keys(node):
            problems.append(KbProblem(file=file, line=key_line, message=f"key '{key}' given twice"))
        if not isinstance(raw, dict):
            problems.append(KbProblem(file=file, line=line, message="an entry must be a mapping"))
            continue
        label = f"entry '{raw.get('id', '?')}'"
        try:
            entry = Entry.model_validate(raw)
        except ValidationError as err:
            for error in err.errors():
                problems.append(KbProblem(file=file, line=_node_line(node, tuple(error["loc"])),
                                        message=f"{label}: {_format_error(error)}"))
            continue
        entries.append(entry.located(file, line))
    return entries, problems
