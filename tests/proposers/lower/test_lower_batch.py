"""`xe-forge batch` over the KernelBench level-2 layout (`<id>_<Ops>.py`, no seed): every problem is ported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xe_forge.cli.app import app

LEVEL2 = Path(__file__).parent / "level2"
runner = CliRunner()


@pytest.mark.slow  # three ports verified under the interpreter, each in its own problem process
def test_a_port_only_batch_ports_conv_transposed_conv_and_gemm_problems(tmp_path: Path) -> None:
    out = tmp_path / "batch"
    args = ["batch", str(LEVEL2), "--only", "1,5,12", "--port-only", "--device", "cpu", "--engine", "rules",
            "--out", str(out), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):])
    rows = {r["id"]: r for r in summary["per_problem"]}
    assert set(rows) == {1, 5, 12} and all(r["correct"] for r in rows.values()), \
        {k: (r["status"], r["reason"]) for k, r in rows.items() if not r["correct"]}
    assert {r["ported_by"] for r in rows.values()} == {"general"}
    for job in (out / "jobs").glob("*.result.json"):
        data = json.loads(job.read_text())
        assert data["paths"] and set(data["paths"].values()) == {"general"}  # which path served each shape
        assert any(label.startswith("unseen") for label in data["paths"])
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "jobs").glob("*.result.json")}
    again = runner.invoke(app, args + ["--resume"])
    assert again.exit_code == 0, again.output
    assert {p.name: p.stat().st_mtime_ns for p in (out / "jobs").glob("*.result.json")} == stamps  # nothing re-ran


def test_port_only_and_no_seeds_take_no_seed(tmp_path: Path) -> None:
    from xe_forge.batch.models import BatchRequest
    from xe_forge.batch.runner import _solve, discover_problems

    problem = discover_problems(LEVEL2, {12})[0]
    seen = {}

    class Recorder:
        def run(self, job, env):
            seen["job"] = job
            from xe_forge.batch.models import ProblemResult

            return ProblemResult(problem_id=job.problem.id, name=job.problem.name)

    seeds = Path(__file__).parents[3] / "examples"  # example 12 is a seed for problem 12
    for flags in ({"no_seeds": True}, {"port_only": True}):
        opts = BatchRequest(problems_dir=str(LEVEL2), out=str(tmp_path), **flags)
        _solve(problem, opts, seeds, tmp_path, {}, Recorder())
        assert seen["job"].run.kernel == "" and seen["job"].port_only == flags.get("port_only", False)
    _solve(problem, BatchRequest(problems_dir=str(LEVEL2), out=str(tmp_path)), seeds, tmp_path, {}, Recorder())
    assert seen["job"].run.kernel.endswith("kernel.py")  # by default the example's seed is used
