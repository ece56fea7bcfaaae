"""A planted API key, pasted with a trailing newline and echoed back by a hostile endpoint (in an error, in
its answers), is sent stripped and appears nowhere else: not in the console, the logs, the run store, the
checkpoints, the reports, the candidates or the exported trajectories."""

from __future__ import annotations

import logging

from typer.testing import CliRunner

from xe_forge.batch.report import export_trajectories
from xe_forge.cli.app import app

from .fake_openai import Reply, Script, chat_answer, code_answer
from .helpers import KERNEL, candidate

KEY = "sk-planted-2b7e151628aed2a6abf71588"
ECHO = "{authorization}"  # the fake server writes the request's Authorization header here


def _leaks(data: bytes) -> bool:
    return KEY.encode() in data or KEY[3:19].encode() in data  # the whole key or a long piece of it


def test_a_planted_key_is_stripped_sent_and_never_kept(fake_llm, tmp_path, caplog):
    echoing = Script().route("Analyze this Triton kernel",
                             Reply(status=500, error=f"upstream failed for {ECHO}"),
                             chat_answer(issues=[{"stage": "fusion", "kind": "unfused", "description": f"see {ECHO}",
                                                  "evidence": ECHO}]))
    echoing.route("## Stage: fusion", code_answer(candidate("fused_wrong"), rationale=f"signed {ECHO}"),
                  code_answer(candidate("fused_good").replace('"""A correct', f'"""{ECHO}\n\nA correct'),
                              rationale=f"fixed, {ECHO}"))
    server = fake_llm(echoing)
    env = {"XE_FORGE_MODEL": "openai/fake", "XE_FORGE_API_BASE": server.api_base, "XE_FORGE_API_KEY": KEY + "\n",
           "OPENAI_API_KEY": f"  {KEY}\n", "XE_FORGE_LLM_RETRIES": "1", "COLUMNS": "400"}
    with caplog.at_level(logging.DEBUG):
        result = CliRunner().invoke(app, ["optimize", str(KERNEL), "--engine", "llm", "--device", "cpu", "--stages",
                                          "fusion", "--max-iters", "2", "--run-dir", str(tmp_path / "runs"),
                                          "-o", str(tmp_path / "out.py")], env=env)

    assert result.exit_code == 0, result.output
    assert all(r.header("authorization") == f"Bearer {KEY}" for r in server.requests)  # stripped, then sent
    assert "XE_FORGE_API_KEY had leading or trailing whitespace" in result.output
    assert "OPENAI_API_KEY had leading or trailing whitespace" in result.output
    assert "[redacted]" in (tmp_path / "out.py").read_text()  # the echo was there, and was removed
    assert not _leaks(result.output.encode()) and not _leaks(caplog.text.encode())

    (run_dir,) = (tmp_path / "runs").iterdir()
    files = [p for p in run_dir.rglob("*") if p.is_file()] + [tmp_path / "out.py"]
    assert {"store.sqlite", "checkpoints.sqlite", "report.json", "report.md", "report.html", "output.py",
            "args.json"} <= {p.name for p in files}
    assert not [str(p) for p in files if _leaks(p.read_bytes())]

    trajectories = tmp_path / "t.jsonl"
    assert export_trajectories(tmp_path, trajectories) == 2
    assert not _leaks(trajectories.read_bytes())
