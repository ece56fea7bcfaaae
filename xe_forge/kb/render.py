"""The text a prompt gets for an entry: markdown, always whole entries.

Retrieval budgets by the length of exactly this text, so what is counted is what is sent.
"""

from __future__ import annotations

from collections.abc import Iterable

import yaml

from xe_forge.kb.schema import CONFIG_KEYWORDS, Entry


def _fence(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code.rstrip()}\n```"


def _config_line(config: dict) -> str:
    kwargs = {k: v for k, v in config.items() if k not in CONFIG_KEYWORDS}
    keywords = ", ".join(f"{k}={v!r}" for k, v in config.items() if k in CONFIG_KEYWORDS)
    return f"triton.Config({kwargs!r}{', ' + keywords if keywords else ''})"


def _body(entry: Entry) -> list[str]:
    lines: list[str] = []
    if entry.constraint:
        lines.append(f"Rule: {entry.constraint.rule}")
        if entry.constraint.check:
            lines.append("Checked statically: " + yaml.safe_dump(
                entry.constraint.check.model_dump(by_alias=True, exclude_none=True),
                default_flow_style=True, width=1000, sort_keys=False).strip())
    if entry.pattern:
        lines += ["Before:", _fence(entry.pattern.before), "After:", _fence(entry.pattern.after),
                  f"Why: {entry.pattern.rationale}"]
    if entry.recipe:
        params = yaml.safe_dump(entry.recipe.params, default_flow_style=True, width=1000, sort_keys=False).strip()
        lines.append(f"Transform `{entry.recipe.name}` with {params}")
        if entry.recipe.preconditions:
            lines.append("Preconditions: " + "; ".join(entry.recipe.preconditions))
        lines.append(f"Expected effect: {entry.recipe.expected_effect}")
    if entry.config_space:
        for problem_class, configs in entry.config_space.items():
            lines.append("\n".join([f"- {problem_class}:"] + [f"    - `{_config_line(c)}`" for c in configs]))
    if entry.example:
        lines.append(f"Teaches: {entry.example.teaches}")
        path = entry.example_file()
        if path is not None and path.is_file():
            lines.append(_fence(path.read_text(encoding="utf-8")))
        else:
            lines.append(f"(example file {entry.example.path})")
    return lines


def render_entry(entry: Entry) -> str:
    """One entry as markdown: heading, applicability, summary, the kind's own block."""
    scope = f"targets: {', '.join(entry.targets)}"
    if entry.toolchain:
        scope += f"; toolchain: {entry.toolchain}"
    scope += f"; confidence: {entry.confidence}"
    if entry.confidence == "low":
        scope += " (unverified: treat as a hint, not a fact)"
    if entry.verified_on:
        scope += f"; verified on: {entry.verified_on}"
    head = [f"### {entry.title} [{entry.kind}: {entry.id}]", f"_{scope}_", entry.summary.strip()]
    if entry.facts:
        head.append("Facts: " + "; ".join(f"{f.key} = {f.value}" for f in entry.facts))
    return "\n\n".join(head + _body(entry)) + "\n"


def render_entries(entries: Iterable[Entry]) -> str:
    """The knowledge a prompt gets: whole entries, in the order given, separated by blank lines."""
    return "\n".join(render_entry(e) for e in entries)


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token), enough to keep prompts inside a budget."""
    return (len(text) + 3) // 4
