"""Shared helpers of the pipeline suite: fixture paths, settings for a fake endpoint, one-call runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from xe_forge.config import RunRequest, Settings
from xe_forge.pipeline.run import OptimizeResult, optimize

from .fake_openai import FakeOpenAI

FIXTURES = Path(__file__).parent / "fixtures"
PROBLEM = FIXTURES / "scale_relu"  # 8x32 elementwise: a candidate evaluates in about a second
KERNEL = PROBLEM / "kernel.py"
REPO = Path(__file__).resolve().parents[2]
EXAMPLE_12 = REPO / "examples" / "12_Gemm_Multiply_LeakyReLU" / "kernel.py"
ALL_STAGES = "algorithmic,dtype,fusion,memory_access,block_io,persistent,device_tuning,autotuning,discovery"


def candidate(name: str) -> str:
    """A scripted answer's kernel file from fixtures/scale_relu (or fixtures/ for other problems)."""
    path = PROBLEM / f"{name}.py"
    return (path if path.exists() else FIXTURES / f"{name}.py").read_text()


def llm_settings(server: FakeOpenAI | None = None, **overrides: Any) -> Settings:
    """Settings pointing at a fake endpoint: no retries, short timeouts, no .env file."""
    values: dict[str, Any] = {"model": "openai/fake", "llm_retries": 0, "llm_timeout": 30.0}
    if server is not None:
        values["api_base"] = server.api_base
    values.update(overrides)
    return Settings(_env_file=None, **values)


def run(settings: Settings, tmp_path: Path, *, kernel: Path = KERNEL, stages: str | None = "fusion",
        max_iters: int = 3, **kwargs: Any) -> OptimizeResult:
    """One optimize call on the CPU, in the LLM engine, with run directories under tmp_path/runs."""
    request = RunRequest(kernel=str(kernel), device="cpu", engine="llm", stages=stages, max_iters=max_iters,
                         timeout=120.0, run_dir=tmp_path / "runs")
    return optimize(request, settings, **kwargs)


def store_rows(run_dir: str | Path, table: str) -> list[dict[str, Any]]:
    """Rows of one run-store table, read through a separate connection (what a user would see)."""
    conn = sqlite3.connect(Path(run_dir) / "store.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]  # noqa: S608
    finally:
        conn.close()


def candidates(run_dir: str | Path, stage: str | None = None) -> list[dict[str, Any]]:
    rows = store_rows(run_dir, "candidates")
    for row in rows:
        row["verdict"] = json.loads(row["verdict"])
    return [r for r in rows if stage is None or r["stage"] == stage]


def report(run_dir: str | Path) -> tuple[dict[str, Any], str]:
    """report.json as data and report.md as text."""
    run_dir = Path(run_dir)
    return json.loads((run_dir / "report.json").read_text()), (run_dir / "report.md").read_text()


def in_markdown(text: str, md: str, chars: int = 80) -> bool:
    """Whether the start of a verdict summary appears in report.md (which writes each on one line)."""
    return " ".join(text.replace("```", "'''").split())[:chars] in md
