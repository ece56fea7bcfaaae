"""Small libcst helpers shared by the transforms: naming, walking, literals and batched edits.

libcst nodes compare by identity and every transform pass rebuilds the tree, so transforms collect
all their edits against one parsed module (original node -> replacement) and apply them in a single
pass with `apply_edits`; that keeps the untouched source byte-for-byte as the user wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Union

import libcst as cst

from xe_forge.proposers.rules.models import NotApplicable

Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]
Edit = Union[Replacement, Callable[[cst.CSTNode], Replacement]]


def parse(source: str) -> cst.Module:
    """Parse a kernel file; a syntax error is a refusal, not a crash."""
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as err:
        raise NotApplicable(f"source does not parse: {err.message} (line {err.raw_line})") from None


def dotted(node: cst.CSTNode | None) -> str | None:
    """'tl.program_id' for an Attribute chain of Names, 'x' for a Name, None otherwise."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def call_name(node: cst.CSTNode) -> str | None:
    """Dotted name of the callee when `node` is a call, else None."""
    return dotted(node.func) if isinstance(node, cst.Call) else None


_WALKS: dict[cst.CSTNode, list[cst.CSTNode]] = {}
_WALK_LIMIT = 400_000


def _flat(node: cst.CSTNode) -> list[cst.CSTNode]:
    found = _WALKS.get(node)
    if found is None:
        found = [node]
        for child in node.children:
            found.extend(_flat(child))
        if len(_WALKS) > _WALK_LIMIT:
            _WALKS.clear()
        _WALKS[node] = found
    return found


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `node` (itself included), in source order.

    Nodes are immutable and hashed by identity, so each subtree is flattened once and reused: the
    transforms ask the same questions of the same nodes many times (libcst's `children` is slow).
    """
    return iter(_flat(node))


def read_names(node: cst.CSTNode) -> set[str]:
    """Identifiers read under `node`, excluding attribute names (`tl.dot` reads `tl` only)."""
    attr_nodes = {id(sub.attr) for sub in walk(node) if isinstance(sub, cst.Attribute)}
    return {sub.value for sub in walk(node) if isinstance(sub, cst.Name) and id(sub) not in attr_nodes}


def int_value(node: cst.CSTNode | None) -> int | None:
    """The value of an integer literal (underscores allowed), else None."""
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
    return None


def is_power_of_two(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0 and value & (value - 1) == 0


class _Editor(cst.CSTTransformer):
    def __init__(self, edits: dict[cst.CSTNode, Edit]) -> None:
        super().__init__()
        self._edits = edits

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Replacement:  # type: ignore[override]
        edit = self._edits.get(original_node)
        if edit is None:
            return updated_node
        if callable(edit) and not isinstance(edit, cst.CSTNode):
            return edit(updated_node)
        return edit


def apply_edits(module: cst.Module, edits: dict[cst.CSTNode, Edit]) -> str:
    """Apply all edits (keyed by original node identity) in one pass and return the new source.

    A callable edit receives the node with its children already edited, so nested edits compose.
    """
    if not edits:
        return module.code
    return module.visit(_Editor(edits)).code


def rewrite(node: cst.CSTNode, edits: dict[cst.CSTNode, Edit]) -> cst.CSTNode:
    """A copy of `node` with the edits applied (for building a private variant of shared code)."""
    return node.visit(_Editor(edits))  # type: ignore[return-value]


def code_of(node: cst.CSTNode) -> str:
    """Source text of one node (without leading/trailing whitespace)."""
    return cst.Module(body=[]).code_for_node(node).strip()


def fresh_name(base: str, taken: set[str]) -> str:
    """`base` if unused, else base_2, base_3, ... (never shadows a name the code already uses)."""
    if base not in taken:
        return base
    index = 2
    while f"{base}_{index}" in taken:
        index += 1
    return f"{base}_{index}"


def literal(value: object) -> cst.BaseExpression:
    """A Python literal node for an int, float, bool or str option value."""
    if isinstance(value, str):
        return cst.SimpleString(f'"{value}"')
    return cst.parse_expression(repr(value))


def _separator(items: list) -> cst.Comma | cst.MaybeSentinel:
    """The comma between items as the call is written (keeps one-argument-per-line layouts)."""
    if len(items) >= 2 and isinstance(items[-2].comma, cst.Comma):
        return items[-2].comma
    return cst.MaybeSentinel.DEFAULT


def _keep_comment(comma: object, sep: object) -> object:
    """The separator to put after the old last item: its own comma (and end-of-line comment) when it
    has one, re-indented like the other separators so the next item lines up."""
    own, other = getattr(comma, "whitespace_after", None), getattr(sep, "whitespace_after", None)
    if isinstance(own, cst.ParenthesizedWhitespace) and isinstance(other, cst.ParenthesizedWhitespace):
        return comma.with_changes(whitespace_after=own.with_changes(last_line=other.last_line))  # type: ignore[attr-defined]
    return sep


def _drop_comment(comma: object) -> object:
    space = getattr(comma, "whitespace_after", None)
    if isinstance(space, cst.ParenthesizedWhitespace) and space.first_line.comment is not None:
        return comma.with_changes(whitespace_after=space.with_changes(first_line=cst.TrailingWhitespace()))  # type: ignore[attr-defined]
    return comma


def append_items(items: list, new: list) -> list:
    """Args or Params with `new` appended, in the layout of the existing ones (comments stay put)."""
    if not new:
        return list(items)
    if not items:
        return list(new)
    trailing = items[-1].comma
    sep = _separator(items)
    out = [*items[:-1], items[-1].with_changes(comma=_keep_comment(trailing, sep))]
    out += [item.with_changes(comma=sep) for item in new[:-1]]
    out.append(new[-1].with_changes(comma=_drop_comment(trailing)))
    return out
