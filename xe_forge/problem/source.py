"""A kernel or reference file as read (never executed): what the constructor check and the problem share."""

from __future__ import annotations

import ast
from pathlib import Path

from pydantic import BaseModel

MODEL_CLASSES = ("ModelNew", "Model")


class SourceFile(BaseModel):
    """A kernel or reference file, read and parsed but not executed."""

    path: Path
    source: str
    model_class: str

    @property
    def tree(self) -> ast.Module:
        return ast.parse(self.source, filename=str(self.path))
