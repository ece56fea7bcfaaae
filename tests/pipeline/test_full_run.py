"""The full nine-stage run on examples/12 (ci shapes) on the CPU, with scripted answers; the key stays secret."""

from __future__ import annotations

from pathlib import Path

import pytest

import xe_forge.verify.sandbox as sandbox
from xe_forge.stages import stage_names

from .fake_openai import Script, code_answer, issues_answer
from .helpers import ALL_STAGES, EXAMPLE_12, candidate, llm_settings, report, run, store_rows

SECRET = "sk-test-full-run-5b1e9c0d"


@pytest.fixture
def worker_environ(monkeypatch):
    """The environment of every evaluation worker started, read from /proc right after it starts."""
    seen: list[bytes] = []
    real_start = sandbox.Worker._start

    def start(self):
        real_start(self)
        seen.append(Path(f"/proc/{self._proc.pid}/environ").read_bytes())

    monkeypatch.setattr(sandbox.Worker, "_start", start)
    return seen


@pytest.mark.slow
def test_nine_stages_on_example_12(fake_llm, tmp_path, monkeypatch, worker_environ, progress):
    monkeypatch.setenv("XE_FORGE_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server = fake_llm(Script(default="Looks optimal already.")
                      .route("Analyze this Triton kernel", issues_answer([]))
                      .route("## Stage: fusion", code_answer(candidate("gemm12_fused"))))
    result = run(llm_settings(server, api_key=SECRET), tmp_path, kernel=EXAMPLE_12, stages=ALL_STAGES, max_iters=2,
                 progress=progress)

    assert result.exit_code == 0 and result.status == "verified correct, speed not measured", result.status
    run_dir = Path(result.run_dir)
    data, md = report(run_dir)
    assert data["plan"] == list(stage_names())
    assert [s["stage"] for s in data["stages"]] == list(stage_names())
    fusion = next(s for s in data["stages"] if s["stage"] == "fusion")
    assert fusion["improved"] and fusion["candidates"][-1]["source"] == "llm"
    assert data["final"]["passed"] and data["final"]["changed"] and data["final"]["unseen"]
    assert "speed: unverified" in md and "| fusion | changed, verified correct |" in md
    html = (run_dir / "report.html").read_text()
    assert html.startswith("<!doctype html>") and data["run_id"] in html
    assert "_linear_leaky_relu_kernel" in (run_dir / "output.py").read_text()

    # tokens: every real call is on the ledger with its usage; the report sums them
    calls = store_rows(run_dir, "llm_calls")
    fresh = [c for c in calls if not c["cached"]]
    assert fresh and all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in fresh)
    assert data["llm"]["prompt_tokens"] == sum(c["prompt_tokens"] for c in calls)
    assert {c["stage"] for c in calls} >= {None, "fusion", "discovery"}
    assert "tokens" in progress.text

    # the key reached the endpoint, and nowhere else
    assert all(r.header("authorization") == f"Bearer {SECRET}" for r in server.requests)
    assert worker_environ and all(SECRET.encode() not in env for env in worker_environ)
    assert all(b"XE_FORGE_API_KEY" not in env and b"OPENAI_API_KEY" not in env for env in worker_environ)
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert {"report.json", "report.md", "report.html", "store.sqlite", "checkpoints.sqlite"} <= {p.name for p in files}
    leaked = [str(p) for p in files if SECRET.encode() in p.read_bytes()]
    assert not leaked
    assert SECRET not in progress.text
