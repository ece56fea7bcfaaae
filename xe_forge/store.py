"""The one SQLite layer: `SqliteFile` (a schema, a lock, commit per write), and the run store on it.

The run store is one file per run directory holding runs, stages, candidates, LLM calls. Checkpoints
(graph progress) live beside it in the LangGraph SQLite saver; this file holds results. The LLM cache
table is what lets `--resume` replay answers already paid for instead of asking again. The batch
store (batch/store.py) is the same layer with its own schema.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, created REAL, kernel TEXT, status TEXT, args TEXT, result TEXT);
CREATE TABLE IF NOT EXISTS stages (
    run_id TEXT, stage TEXT, status TEXT, started REAL, finished REAL, speedup REAL, summary TEXT,
    PRIMARY KEY (run_id, stage));
CREATE TABLE IF NOT EXISTS candidates (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, stage TEXT, iteration INTEGER, source TEXT,
    recipe TEXT, entry_id TEXT, code_hash TEXT, code TEXT, prompt_hash TEXT, rationale TEXT,
    passed INTEGER, accepted INTEGER, speedup REAL, verdict TEXT, created REAL);
CREATE TABLE IF NOT EXISTS llm_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, stage TEXT, purpose TEXT, model TEXT,
    prompt_hash TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, seconds REAL,
    cached INTEGER, error TEXT, created REAL, finish_reason TEXT, attempt INTEGER, estimated INTEGER);
CREATE TABLE IF NOT EXISTS llm_cache (key TEXT PRIMARY KEY, response TEXT, created REAL);
"""


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()[:16]


class SqliteFile:
    """Thread-safe access to one SQLite file with a schema; every write is committed at once.

    Several threads (the batch runner's workers) and processes (a problem's run and the batch
    report) may open the same file: writes wait up to 30 s for the lock.
    """

    schema = ""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self.conn.row_factory = sqlite3.Row
        with self._lock:
            self.conn.executescript(self.schema)
            self.conn.commit()

    def execute(self, sql: str, args: tuple = ()) -> sqlite3.Cursor:
        with self._lock:
            cur = self.conn.execute(sql, args)
            self.conn.commit()
            return cur

    def query(self, sql: str, args: tuple = ()) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self.conn.execute(sql, args).fetchall()]

    def close(self) -> None:
        with self._lock:
            self.conn.close()


class RunStore(SqliteFile):
    """One run's results: runs, stages, candidates, LLM calls and the LLM answer cache."""

    schema = SCHEMA

    # runs ---------------------------------------------------------------
    def start_run(self, run_id: str, kernel: str, args: dict[str, Any]) -> None:
        self.execute("INSERT OR IGNORE INTO runs VALUES (?,?,?,?,?,?)",
                   (run_id, time.time(), kernel, "running", json.dumps(args, default=str), None))

    def finish_run(self, run_id: str, status: str, result: dict[str, Any] | None = None) -> None:
        self.execute("UPDATE runs SET status=?, result=? WHERE run_id=?",
                   (status, json.dumps(result, default=str) if result is not None else None, run_id))

    def run(self, run_id: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM runs WHERE run_id=?", (run_id,))
        return rows[0] if rows else None

    # stages -------------------------------------------------------------
    def stage(self, run_id: str, stage: str, status: str, *, speedup: float | None = None,
              summary: dict[str, Any] | None = None) -> None:
        now = time.time()
        self.execute("INSERT INTO stages VALUES (?,?,?,?,?,?,?) ON CONFLICT(run_id, stage) DO UPDATE SET "
                   "status=excluded.status, finished=excluded.finished, speedup=excluded.speedup, "
                   "summary=excluded.summary",
                   (run_id, stage, status, now, now if status != "running" else None, speedup,
                    json.dumps(summary or {}, default=str)))

    # candidates ---------------------------------------------------------
    def add_candidate(self, run_id: str, stage: str, iteration: int, *, code: str, source: str, recipe: str,
                      entry_id: str | None, prompt_hash: str | None, rationale: str, verdict: dict[str, Any],
                      passed: bool, accepted: bool, speedup: float | None) -> int:
        cur = self.execute("INSERT INTO candidates (run_id, stage, iteration, source, recipe, entry_id, code_hash, "
                         "code, prompt_hash, rationale, passed, accepted, speedup, verdict, created) "
                         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         (run_id, stage, iteration, source, recipe, entry_id, code_hash(code), code, prompt_hash,
                          rationale, int(passed), int(accepted), speedup, json.dumps(verdict, default=str),
                          time.time()))
        return int(cur.lastrowid)

    def candidates(self, run_id: str) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM candidates WHERE run_id=? ORDER BY id", (run_id,))

    # llm ----------------------------------------------------------------
    def add_llm_call(self, run_id: str, call: Any) -> None:
        """One HTTP request (or cache replay); `cost` NULL when the model's price is unknown."""
        self.execute("INSERT INTO llm_calls (run_id, stage, purpose, model, prompt_hash, prompt_tokens, "
                     "completion_tokens, cost, seconds, cached, error, created, finish_reason, attempt, estimated) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     (run_id, call.stage, call.purpose, call.model, call.prompt_hash, call.prompt_tokens,
                      call.completion_tokens, call.cost, call.seconds, int(call.cached), call.error, time.time(),
                      call.finish_reason, call.attempt, int(call.estimated)))

    def llm_calls(self, run_id: str) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM llm_calls WHERE run_id=? ORDER BY id", (run_id,))

    def llm_spent(self, run_id: str) -> tuple[float, int]:
        """Dollars (known prices) and tokens of the requests sent so far: what a resumed run's budget counts."""
        rows = self.query("SELECT COALESCE(SUM(cost), 0) AS usd, COALESCE(SUM(prompt_tokens + completion_tokens), 0) "
                          "AS tokens FROM llm_calls WHERE run_id=? AND cached=0", (run_id,))
        return float(rows[0]["usd"]), int(rows[0]["tokens"])


class LLMCache:
    """The store's llm_cache table, with the get/put interface LLMClient expects."""

    def __init__(self, store: RunStore) -> None:
        self.store = store

    def get(self, key: str) -> dict[str, Any] | None:
        rows = self.store.query("SELECT response FROM llm_cache WHERE key=?", (key,))
        return json.loads(rows[0]["response"]) if rows else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.store.execute("INSERT OR REPLACE INTO llm_cache VALUES (?,?,?)", (key, json.dumps(value), time.time()))
