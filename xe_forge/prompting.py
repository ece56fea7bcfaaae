"""Prompt templates (prompts/*.j2) rendered with Jinja: prompts are data, not code."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2

from xe_forge.paths import data_dir


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_dir("prompts"))),
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                              trim_blocks=False, lstrip_blocks=False, autoescape=False)


def render(template: str, **values: Any) -> str:
    return _env().get_template(template).render(**values)
