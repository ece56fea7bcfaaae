"""`xe-forge profile` as a user runs it: the record and the limiter, `--json`, `--roofline`, and on a
machine without counters one clear line and exit code 3, never a traceback."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from xe_forge.cli.app import app

from .conftest import EXAMPLE

KERNEL = str(EXAMPLE / "kernel.py")


def test_on_this_cpu_machine_the_profile_is_unavailable_with_the_reason():
    result = CliRunner().invoke(app, ["profile", KERNEL])
    assert result.exit_code == 3, result.output
    assert "profile unavailable:" in result.output and "interpreter" in result.output
    assert "Traceback" not in result.output


def test_json_output_is_one_document():
    result = CliRunner().invoke(app, ["profile", KERNEL, "--json", "--variant", "bench-gpu"])
    assert result.exit_code == 3
    data = json.loads(result.output)
    assert data["record"]["unavailable"] and data["record"]["variant"] == "bench-gpu"
    assert data["diagnosis"]["limiter"] == "unknown"


def test_bad_input_is_exit_code_2(tmp_path):
    result = CliRunner().invoke(app, ["profile", str(tmp_path / "missing.py")])
    assert result.exit_code == 2 and "not found" in result.output


def test_a_gpu_that_is_not_there_is_exit_code_3():
    result = CliRunner().invoke(app, ["profile", KERNEL, "--device", "cuda"])
    assert result.exit_code == 3 and "not available" in result.output


class _FakeCuda:
    kind = "cuda"
    default_target = "nvidia-sm90"


def test_with_counters_it_prints_the_kernels_the_limiter_and_the_roofline(fake, monkeypatch, tmp_path):
    monkeypatch.setattr("xe_forge.targets.get_device", lambda name, target=None: _FakeCuda())
    fake.steps({"log": "ncu_raw_gemm_seed.csv"})
    png = tmp_path / "roof.png"
    result = CliRunner().invoke(app, ["profile", KERNEL, "--variant", "bench-gpu", "--roofline", str(png),
                                      "--target", "nvidia-sm90"])
    assert result.exit_code == 0, result.output
    assert "_linear_bias_kernel" in result.output and "limiter: latency-bound" in result.output
    assert "of the roof at" in result.output
    assert png.read_bytes().startswith(b"\x89PNG")
    data = json.loads(CliRunner().invoke(app, ["profile", KERNEL, "--variant", "bench-gpu", "--json",
                                               "--target", "nvidia-sm90"]).output)
    assert data["diagnosis"]["kernel"] == "_linear_bias_kernel" and "limiter:" in data["feedback"]
