"""The HTML pages of the reports: jinja2 templates in pipeline/templates, one page layout (page.html.j2)
shared by the run report and the batch report; plots inline as data URIs, so a page is one file."""

from __future__ import annotations

import base64
import difflib
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from xe_forge.pipeline.status import tone

TEMPLATES = Path(__file__).parent / "templates"


@cache
def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["num"] = lambda v, fmt=".3f": "-" if v is None else format(v, fmt)
    env.filters["pct"] = lambda v: "-" if v is None else f"{v:.1%}"
    env.globals["tone"] = tone
    return env


def render_page(template: str, **context: Any) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        context.setdefault("version", version("xe-forge"))
    except PackageNotFoundError:
        context.setdefault("version", "")
    return _env().get_template(template).render(**context)


def data_uri(png: bytes | None) -> str | None:
    return f"data:image/png;base64,{base64.b64encode(png).decode()}" if png else None


def side_by_side(before: str, after: str, before_name: str, after_name: str) -> Markup:
    """The two files side by side, changed lines marked, unchanged runs folded to 3 lines of context."""
    table = difflib.HtmlDiff(tabsize=4).make_table(before.splitlines(), after.splitlines(), before_name, after_name,
                                                   context=True, numlines=3)
    return Markup(table)  # noqa: S704 - difflib escapes the file contents itself
