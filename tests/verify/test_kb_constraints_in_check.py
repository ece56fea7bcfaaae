"""`xe-forge check` applies the knowledge base's machine-checkable constraints for the target:
an option the target's toolchain rejects fails before anything runs, naming the KB entry."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from xe_forge.cli.app import app

EXAMPLE = Path(__file__).parents[2] / "examples" / "12_Gemm_Multiply_LeakyReLU"
LAUNCH = "BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,"


def _variant(tmp_path: Path, options: str) -> Path:
    folder = tmp_path / "ex"
    shutil.copytree(EXAMPLE, folder)
    kernel = folder / "kernel.py"
    source = kernel.read_text()
    assert LAUNCH in source
    kernel.write_text(source.replace(LAUNCH, f"{LAUNCH} {options}", 1))
    return kernel


def test_old_grf_name_is_rejected_for_xe2_with_the_entry_id(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    kernel = _variant(tmp_path, "grf_mode='large', num_warps=8,")
    result = CliRunner().invoke(app, ["check", str(kernel), "--device", "cpu", "--target", "intel-xe2"])
    assert result.exit_code == 1
    assert "failed at static" in result.output and "[xpu-grf-mode-names" in result.output
    assert "'large'" in result.output


def test_grf_256_with_64_warps_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    kernel = _variant(tmp_path, "grf_mode='256', num_warps=64,")
    result = CliRunner().invoke(app, ["check", str(kernel), "--device", "cpu", "--target", "intel-xe2"])
    assert result.exit_code == 1 and "32" in result.output and "[xpu-grf-large-max-32-warps]" in result.output


def test_xpu_option_is_rejected_for_hopper_but_legal_options_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    bad = CliRunner().invoke(app, ["check", str(_variant(tmp_path / "a", "grf_mode='256', num_warps=8,")),
                                   "--device", "cpu", "--target", "nvidia-sm90", "--no-unseen", "--trials", "1"])
    assert bad.exit_code == 1 and "grf_mode" in bad.output
    good = CliRunner().invoke(app, ["check", str(_variant(tmp_path / "b", "grf_mode='256', num_warps=32,")),
                                    "--device", "cpu", "--target", "intel-xe2", "--no-unseen", "--trials", "1"])
    assert good.exit_code == 0, good.output
