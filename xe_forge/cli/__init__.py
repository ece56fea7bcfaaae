"""The `xe-forge` command line: a typer app, one module per command group, one error path."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

from xe_forge.cli.app import app, main  # noqa: E402

__all__ = ["app", "main"]
