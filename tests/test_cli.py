"""The command line (xe_forge/cli/): every command has help, `doctor` reports without leaking a
key, and bad input or a missing device is one line with exit code 2 or 3 (no traceback)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.config import PROVIDER_KEY_VARS
from xe_forge.targets.base import registered

SECRET = "sk-test-SECRET"
PROBLEMS = Path(__file__).parent / "fixtures_foundation" / "problems"
DESIGN_COMMANDS = {"optimize", "check", "bench", "batch", "kb", "stages", "doctor"}
runner = CliRunner()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("XE_FORGE_") or name in PROVIDER_KEY_VARS:
            monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps long table cells at the default 80
    monkeypatch.chdir(tmp_path)


def command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name, command in group.commands.items():
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths += command_paths(command, (*prefix, name))
    return paths


COMMANDS = command_paths(typer.main.get_command(app))


def test_every_command_of_the_design_exists():
    assert DESIGN_COMMANDS <= {path[0] for path in COMMANDS}


@pytest.mark.parametrize("path", [()] + COMMANDS, ids=lambda p: " ".join(p) or "xe-forge")
def test_every_command_has_help(path):
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_doctor_lists_the_cpu_and_no_llm():
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "device cpu" in result.output and "triton" in result.output
    assert "not configured" in result.output
    assert "knowledge base" in result.output


def test_doctor_json_parses_and_never_contains_the_key(monkeypatch):
    monkeypatch.setenv("XE_FORGE_API_KEY", SECRET)
    monkeypatch.setenv("XE_FORGE_MODEL", "openai/gpt-test")
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    info = json.loads(result.stdout)
    assert info["devices"]["cpu"]["available"] is True
    for kind, cls in registered().items():  # a GPU machine lists its GPU: doctor reports what the registry finds
        assert info["devices"][kind]["available"] is cls.available()
    assert info["llm"]["model"] == "openai/gpt-test"
    assert info["llm"]["api_key"] == "XE_FORGE_API_KEY", "doctor names where the key comes from"


def test_doctor_table_never_contains_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0 and SECRET not in result.output
    assert "OPENAI_API_KEY" in result.output


def test_doctor_json_without_llm():
    info = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert "not configured" in info["llm"]["model"] and info["llm"]["api_key"] == "none set"


def problem_dir(tmp_path: Path) -> Path:
    kernel = tmp_path / "conv_bias.py"
    shutil.copy(PROBLEMS / "conv_bias.py", kernel)
    shutil.copy(PROBLEMS / "conv_bias.yaml", tmp_path / "conv_bias.yaml")
    return kernel


@pytest.mark.parametrize("command", ["check", "bench"])
def test_missing_kernel_is_exit_2_with_one_message(tmp_path, command):
    result = runner.invoke(app, [command, str(tmp_path / "absent.py"), "--device", "cpu"])
    assert result.exit_code == 2
    assert "kernel file not found" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("args", "fragment"), [
    (["--variant", "nope"], "no variant 'nope'"),
    (["--reference", "absent_ref.py"], "reference file not found"),
    (["--device", "tpu"], "unknown device 'tpu'"),
    (["--target", "intel-xe9"], "unknown target 'intel-xe9'"),
])
def test_bad_options_are_exit_2(tmp_path, args, fragment):
    result = runner.invoke(app, ["check", str(problem_dir(tmp_path)), "--device", "cpu", *args])
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr


def test_malformed_spec_is_exit_2(tmp_path):
    kernel = problem_dir(tmp_path)
    (tmp_path / "conv_bias.yaml").write_text("inputs: {X: {shape: [B]}}\nci:\n  - dims: {B: 2}\n    dtype: fp99\n")
    result = runner.invoke(app, ["check", str(kernel), "--device", "cpu"])
    assert result.exit_code == 2
    assert "unknown dtype 'fp99'" in result.stderr


def test_syntax_error_is_exit_2_with_the_line(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text("import torch\n\nclass Model(:\n")
    result = runner.invoke(app, ["check", str(kernel), "--device", "cpu"])
    assert result.exit_code == 2 and "syntax error at line 3" in result.stderr


@pytest.mark.parametrize("device", ["cuda", "xpu"])
def test_absent_gpu_is_exit_3(tmp_path, device):
    if registered()[device].available():
        pytest.skip(f"this machine has a {device} device")
    result = runner.invoke(app, ["check", str(problem_dir(tmp_path)), "--device", device])
    assert result.exit_code == 3, result.output
    assert f"device '{device}' is not available" in result.stderr
