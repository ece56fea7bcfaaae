"""The port step: a problem without a seed, with an LLM configured, gets a verified first Triton version.

A scripted OpenAI-compatible server (tests/pipeline/fake_openai.py) plays the model over real HTTP from
the problem process. Its first port is wrong (x + x for x * x); the verifier's findings go back in a
refine prompt and the second is right. Resuming the batch must replay those answers from the cache,
not ask (and pay) again; the trajectory export carries the port candidates with their prompt hashes.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from pipeline.fake_openai import FakeOpenAI, Script, code_answer

from xe_forge.batch.report import export_trajectories
from xe_forge.batch.runner import run_batch

PORT_PROMPT = "Port this PyTorch module to Triton"

PORT_TEMPLATE = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, {expr}, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _square_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out


batch_size = 64
features = 256


def get_inputs():
    return [torch.rand(batch_size, features)]


def get_init_inputs():
    return []
'''


@pytest.fixture
def llm(offline_env, monkeypatch: pytest.MonkeyPatch):
    """A configured model served by the fake; problem processes inherit the variables."""
    script = Script().route(PORT_PROMPT, code_answer(PORT_TEMPLATE.format(expr="x + x")),
                            code_answer(PORT_TEMPLATE.format(expr="x * x")))
    with FakeOpenAI(script) as server:
        monkeypatch.setenv("XE_FORGE_MODEL", "openai/fake-porter")
        monkeypatch.setenv("XE_FORGE_API_BASE", server.api_base)
        yield server


@pytest.mark.slow  # three batch runs, each a problem process that imports torch and spawns a worker
def test_port_verifies_refines_and_replays_on_resume(llm: FakeOpenAI, options, tmp_path: Path):
    out = tmp_path / "out"
    s = run_batch(options(out, only="5", workers=1, max_iters=2))
    (row,) = s["per_problem"]
    assert row["correct"], row["reason"]
    ports = llm.requests_for(PORT_PROMPT)
    assert len(ports) == 2  # the wrong port, then the refine with the verifier's findings
    assert "failed verification" in ports[1].text and "x + x" in ports[1].text  # the refine names what failed
    result = json.loads(next((out / "jobs").glob("p005-*.result.json")).read_text())
    assert result["ported"] is True

    traj = tmp_path / "traj.jsonl"
    export_trajectories(out, traj)
    port_rows = [json.loads(line) for line in traj.read_text().splitlines()]
    port_rows = [r for r in port_rows if r["stage"] == "port"]
    assert [r["passed"] for r in port_rows] == [False, True]
    assert all(r["prompt_hash"] and len(r["prompt_hash"]) == 64 for r in port_rows)
    assert port_rows[0]["prompt_hash"] != port_rows[1]["prompt_hash"]

    # a batch killed after the port, before its process wrote a result: resume redoes the problem
    # without asking the model again
    asked = len(llm.requests)
    with sqlite3.connect(out / "batch.sqlite") as conn:
        conn.execute("UPDATE problems SET status='running' WHERE id=5")
    next((out / "jobs").glob("p005-*.result.json")).unlink()
    again = run_batch(options(out, only="5", workers=1, max_iters=2, resume=True))
    assert again["per_problem"][0]["correct"] and again["per_problem"][0]["attempts"] == 2
    assert len(llm.requests) == asked, [r.text[:80] for r in llm.requests[asked:]]
    export_trajectories(out, traj)
    assert [json.loads(line)["stage"] for line in traj.read_text().splitlines()].count("port") == 2  # not redone

    # killed during the port, after both answers were paid for: they come from the run's cache
    (next((out / "runs").glob("p005-*-port")) / "kernel.py").unlink()
    shutil.rmtree(next(p for p in (out / "runs").glob("p005-*") if not p.name.endswith("-port")))
    with sqlite3.connect(out / "batch.sqlite") as conn:
        conn.execute("UPDATE problems SET status='running' WHERE id=5")
    next((out / "jobs").glob("p005-*.result.json")).unlink()
    third = run_batch(options(out, only="5", workers=1, max_iters=2, resume=True))
    assert third["per_problem"][0]["correct"] and third["per_problem"][0]["attempts"] == 3, third["per_problem"][0]
    assert len(llm.requests_for(PORT_PROMPT)) == 2


def test_rules_engine_never_ports(llm: FakeOpenAI, options, tmp_path: Path):
    s = run_batch(options(tmp_path / "out", only="5", engine="rules"))
    assert s["per_problem"][0]["status"] == "skipped" and llm.requests == []
