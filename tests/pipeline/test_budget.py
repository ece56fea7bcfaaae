"""--budget: the run stops cleanly once the LLM has cost that much, keeps its best verified kernel, says how
to continue, and a resume with a larger budget runs the stages that were skipped."""

from __future__ import annotations

from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.config import Budget

from .fake_openai import Reply, Script, code_answer, issues_answer
from .helpers import KERNEL, candidate, report

STAGES = "fusion,memory_access,discovery"


def _optimize(tmp_path, server, *args: str):
    env = {"XE_FORGE_MODEL": "openai/fake", "XE_FORGE_API_BASE": server.api_base, "XE_FORGE_LLM_RETRIES": "0",
           "COLUMNS": "400"}
    return CliRunner().invoke(app, ["optimize", *args, "--run-dir", str(tmp_path / "runs")], env=env)


def test_a_spent_token_budget_stops_with_the_best_kernel_and_a_resume_continues(fake_llm, tmp_path):
    server = fake_llm(Script(default=Reply(content="Looks optimal already.", usage=(100, 10)))
                      .route("Analyze this Triton kernel", Reply(content=issues_answer([]), usage=(100, 10)))
                      .route("## Stage: fusion", Reply(content=code_answer(candidate("fused_good")), usage=(100, 10))))
    out = tmp_path / "best.py"
    first = _optimize(tmp_path, server, str(KERNEL), "--engine", "llm", "--device", "cpu", "--stages", STAGES,
                      "--max-iters", "1", "--budget", "220 tokens", "-o", str(out))

    assert first.exit_code == 0, first.output  # fusion's verified win is the result
    assert "Traceback" not in first.output
    assert "budget spent: 220 tokens of 220 tokens" in first.output
    assert "not run: memory_access, discovery" in first.output
    assert "_bias_scale_relu_kernel" in out.read_text()
    assert len(server.requests) == 2  # analyze and fusion; nothing after the budget was spent
    (run_dir,) = (tmp_path / "runs").iterdir()
    data, md = report(run_dir)
    assert data["not_run"] == ["memory_access", "discovery"] and data["llm"]["budget"] == "220 tokens"
    assert "stopped early" in md and data["final"]["passed"]
    assert f"xe-forge optimize --resume {run_dir.name}" in first.output
    # written as fusion improved, before the final check: what a run killed at that point leaves
    assert "_bias_scale_relu_kernel" in (run_dir / "best_so_far.py").read_text()

    again = _optimize(tmp_path, server, "--resume", run_dir.name, "--budget", "1k tokens")
    assert again.exit_code == 0, again.output
    assert "continuing with the stages not run" in again.output
    data, _ = report(run_dir)
    assert [s["stage"] for s in data["stages"]] == ["fusion", "memory_access", "discovery"] and not data["not_run"]
    assert len(server.requests) == 4  # one more request per stage that had been skipped
    assert "_bias_scale_relu_kernel" in out.read_text()


def test_a_time_budget_stops_a_rules_run_too(tmp_path):
    """`--budget 45m` is a run's wall-clock limit whatever the engine (it once limited LLM calls only, so a
    rules run on a GPU ran past any limit a job had). Checked before each stage: here spent before the first."""
    result = CliRunner().invoke(app, ["optimize", str(KERNEL), "--engine", "rules", "--device", "cpu",
                                      "--budget", "0.01s", "--run-dir", str(tmp_path / "runs")],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output  # no improvement: no stage ran
    assert "time budget spent" in result.output and "limits LLM calls" not in result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    data, _ = report(run_dir)
    assert not data["stages"] and data["not_run"] and data["final"]["passed"]


def test_a_dollar_budget_for_a_model_without_prices_is_refused(fake_llm, tmp_path):
    server = fake_llm(Script())
    result = _optimize(tmp_path, server, str(KERNEL), "--engine", "llm", "--device", "cpu", "--budget", "$1")
    # the fake server listens on 127.0.0.1, where an unmapped model costs $0: a dollar budget then works
    assert result.exit_code in (0, 1) and "Traceback" not in result.output
    remote = CliRunner().invoke(app, ["optimize", str(KERNEL), "--engine", "llm", "--device", "cpu", "--budget", "$1",
                                      "--run-dir", str(tmp_path / "r2")],
                                env={"XE_FORGE_MODEL": "openai/unpriced-model", "XE_FORGE_API_BASE":
                                     "http://models.invalid/v1", "COLUMNS": "300"})
    assert remote.exit_code == 2 and "dollar budget needs the prices" in remote.output
    assert "Traceback" not in remote.output


def test_budget_texts_parse_and_a_bare_number_is_refused():
    assert Budget.parse("$2").model_dump() == {"amount": 2.0, "unit": "usd"}
    assert Budget.parse("0.5 USD").unit == "usd"
    assert Budget.parse("200k tokens").amount == 200_000 and Budget.parse("1.5M tok").amount == 1_500_000
    assert Budget.parse("45m").amount == 2700 and Budget.parse("2h").amount == 7200
    result = CliRunner().invoke(app, ["optimize", str(KERNEL), "--budget", "5"], env={"COLUMNS": "300"})
    assert result.exit_code == 2 and "budget" in result.output and "Traceback" not in result.output
