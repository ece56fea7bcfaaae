"""docs/SPEC.md documents every key the loader reads, the README links it, and the spec file names are one
list (problem/kernel.SPEC_NAMES) in the code, --help and the README."""

from __future__ import annotations

import typing
from pathlib import Path

from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.problem.kernel import spec_names_text
from xe_forge.problem.spec import RESERVED_KEYS, InputSpec, Precision, Variant, spec_doc

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "SPEC.md").read_text()


def test_spec_md_documents_every_key_field_and_precision():
    keys = RESERVED_KEYS | set(Variant.model_fields) | set(InputSpec.model_fields) | set(typing.get_args(Precision))
    missing = [k for k in sorted(keys) if f"`{k}`" not in DOC]
    assert not missing, f"docs/SPEC.md does not document {missing}"


def test_the_doc_is_where_errors_point():
    assert Path(spec_doc()).resolve() == (REPO / "docs" / "SPEC.md").resolve()


def test_one_list_of_spec_file_names_in_readme_help_and_doc():
    names = spec_names_text()
    readme = (REPO / "README.md").read_text()
    assert "docs/SPEC.md" in readme and names.replace(", ", "`, `") in readme
    assert names.replace(", ", "`, `") in DOC
    help_text = CliRunner().invoke(app, ["check", "--help"], terminal_width=400).output
    assert f"the first of {names} beside" in " ".join(help_text.replace("│", " ").split())
