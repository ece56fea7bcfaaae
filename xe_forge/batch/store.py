"""The batch store (batch.sqlite): one row per problem, on the run store's SQLite layer.

It is what `batch --resume` reads to skip finished problems and redo those left 'running'.
"""

from __future__ import annotations

import json
import time
from typing import Any

from xe_forge.batch.models import ProblemFile, ProblemResult
from xe_forge.store import SqliteFile

SCHEMA = """
CREATE TABLE IF NOT EXISTS problems (
    id INTEGER PRIMARY KEY, name TEXT, status TEXT, worker INTEGER, started REAL, finished REAL,
    attempts INTEGER DEFAULT 0, result TEXT);
"""


class BatchStore(SqliteFile):
    schema = SCHEMA

    def status(self, pid: int) -> str | None:
        rows = self.query("SELECT status FROM problems WHERE id=?", (pid,))
        return rows[0]["status"] if rows else None

    def start(self, problem: ProblemFile, worker: int) -> None:
        self.execute("INSERT INTO problems (id, name, status, worker, started, attempts) VALUES (?,?,?,?,?,1) "
                     "ON CONFLICT(id) DO UPDATE SET status='running', worker=excluded.worker, "
                     "started=excluded.started, attempts=attempts+1",
                     (problem.id, problem.name, "running", worker, time.time()))

    def finish(self, pid: int, result: ProblemResult) -> None:
        self.execute("UPDATE problems SET status=?, finished=?, result=? WHERE id=?",
                     (result.status, time.time(), result.model_dump_json(exclude_unset=True), pid))

    def results(self) -> list[dict[str, Any]]:
        """One dict per problem: its row (id, name, status, worker, attempts) and its last result's fields."""
        rows = self.query("SELECT id, name, status, worker, attempts, result FROM problems ORDER BY id")
        return [{k: r[k] for k in ("id", "name", "status", "worker", "attempts")}
                | (json.loads(r["result"]) if r["result"] else {}) for r in rows]
