"""Reading what a model wrote: a kernel file out of any answer that holds one, and lists for analyze/plan.

Models answer in many shapes: DSPy's `[[ ## code ## ]]` sections, a plain fenced block, a block with
prose around it, no rationale at all, the file twice (before and after). Any answer holding one
complete kernel module (it parses, and defines `Model` or `ModelNew`) is a candidate. An answer cut
off at the token limit is reported as truncated, so the refine step can ask for less; an answer with
code that does not parse goes to the verifier, whose syntax finding names the line.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from pydantic import BaseModel

_FIELD = re.compile(r"^\s*\[\[ ## (\w+) ## \]\]\s*$", re.M)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+-]*)[ \t]*$", re.M)
_KERNEL_HINTS = ("class Model", "class ModelNew", "@triton.jit", "import triton")
MODULE_CLASSES = ("Model", "ModelNew")


class CodeAnswer(BaseModel):
    """The kernel file in an answer (empty if none), the rationale, and why there is no code."""

    code: str = ""
    rationale: str = ""
    defect: str | None = None  # "truncated" | "no-code"
    detail: str = ""


def fields_of(text: str) -> dict[str, str]:
    """DSPy ChatAdapter sections (`[[ ## name ## ]]`), name -> text; empty when there are none."""
    marks = list(_FIELD.finditer(text))
    out: dict[str, str] = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.setdefault(m.group(1), text[m.end():end].strip())
    out.pop("completed", None)
    return out


def read_code_answer(text: str, *, finish_reason: str | None, max_tokens: int | None) -> CodeAnswer:
    """The candidate in an answer of any shape (see the module docstring)."""
    text = (text or "").replace("\r\n", "\n")
    as_json = _json_object(text)  # {"code": ..., "rationale": ...}: what DSPy's JSON format asks for
    if as_json and isinstance(as_json.get("code"), str):
        text = f"[[ ## code ## ]]\n{as_json['code']}\n[[ ## rationale ## ]]\n{as_json.get('rationale') or ''}"
    sections = fields_of(text)
    rationale = sections.get("rationale", "")
    blocks, open_block = _blocks(sections.get("code", text) if "code" in sections else text)
    if "code" in sections and not blocks and open_block is None:
        blocks = [sections["code"]]  # a bare section without a fence
    if not sections and not blocks and open_block is None:
        blocks = [text, _from_first_import(text)]  # the whole answer may be the file, or prose then the file
    modules = [b for b in blocks if is_kernel_module(b)]
    cut = finish_reason == "length"
    if modules:
        code = modules[-1]  # the last complete file: models show "before" first
        return CodeAnswer(code=code.strip() + "\n", rationale=rationale or _prose(text, code))
    attempt = next((b for b in reversed(blocks) if _looks_like_kernel(b)), None)
    if open_block is not None or cut or (attempt is not None and _ends_early(attempt)):
        limit = f"the token limit ({max_tokens} tokens)" if cut and max_tokens else "its end"
        return CodeAnswer(rationale=rationale, defect="truncated",
                          detail=f"the answer was cut off at {limit} before the kernel file was complete")
    if attempt is not None:  # broken Python: the verifier's syntax finding will name the line
        return CodeAnswer(code=attempt.strip() + "\n", rationale=rationale or _prose(text, attempt))
    return CodeAnswer(rationale=rationale or text.strip()[:400], defect="no-code",
                      detail="the answer holds no kernel file (a module defining class Model)")


def is_kernel_module(code: str) -> bool:
    """Parses as Python and defines class Model or ModelNew at module level."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.ClassDef) and n.name in MODULE_CLASSES for n in tree.body)


def read_json_list(text: str, field: str) -> list[Any] | None:
    """A list for `field`: its DSPy section, a JSON list anywhere (or in an object under `field`); else None."""
    candidates = [fields_of(text).get(field, ""), text]
    candidates += [b for b in _blocks(text)[0]]
    for chunk in candidates:
        for start in [m.start() for m in re.finditer(r"[\[{]", chunk or "")][:50]:
            try:
                value, _ = json.JSONDecoder().raw_decode(chunk[start:])
            except ValueError:
                continue
            if isinstance(value, dict):
                value = value.get(field)
            if isinstance(value, list):
                return value
    return None


def _json_object(text: str) -> dict[str, Any] | None:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    if not body.startswith("{"):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _blocks(text: str) -> tuple[list[str], str | None]:
    """Closed fenced blocks, and the text after a fence that was never closed (a cut-off answer)."""
    blocks: list[str] = []
    fences = list(_FENCE.finditer(text))
    i = 0
    while i < len(fences):
        opening = fences[i]
        closing = next((f for f in fences[i + 1:] if f.group(1) == opening.group(1) and not f.group(2)), None)
        if closing is None:
            return blocks, text[opening.end():]
        blocks.append(text[opening.end():closing.start()])
        i = fences.index(closing) + 1
    return blocks, None


def _from_first_import(text: str) -> str:
    m = re.search(r"^(?:import|from)\s", text, flags=re.M)
    return text[m.start():] if m else ""


def _looks_like_kernel(code: str) -> bool:
    return any(h in code for h in _KERNEL_HINTS)


def _ends_early(code: str) -> bool:
    """A syntax error at the very end (an unclosed bracket, an empty block): the text was cut."""
    try:
        ast.parse(code)
    except SyntaxError as err:
        lines = code.rstrip().splitlines()
        return err.lineno is not None and err.lineno >= len(lines) and (
            "was never closed" in str(err.msg) or "unexpected EOF" in str(err.msg) or "expected an indented" in str(err.msg))
    return False


def _prose(text: str, code: str) -> str:
    """What the model wrote around the code, as the rationale when it gave none."""
    rest = text.replace(code, " ")
    rest = _FIELD.sub(" ", _FENCE.sub(" ", rest))
    return " ".join(rest.split())[:1000]
