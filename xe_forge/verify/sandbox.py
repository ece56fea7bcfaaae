"""The parent's handle on the evaluation worker: start it clean, send jobs, survive what it does.

A crash (os.abort, a GPU fault) closes the pipe; a hang passes the timeout; either way the worker is
killed, the job reported as a failure, and a fresh worker started for the next job. The child gets
an environment without API keys and tokens.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
from typing import Any

SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
STARTUP_TIMEOUT = 300.0  # imports and device initialisation; never charged to a job's timeout


def scrubbed_environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not any(m in k.upper() for m in SECRET_MARKERS)}


@contextlib.contextmanager
def _environment(env: dict[str, str]):
    """Spawned children copy os.environ at start: swap it for the scrubbed one just for that moment."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class Worker:
    """One warm evaluation process for one device."""

    def __init__(self, device_kind: str, target: str, *, timeout: float = 300.0) -> None:
        self.device_kind = device_kind
        self.target = target
        self.timeout = timeout
        self._proc: Any = None
        self._conn: Any = None
        self.restarts = 0

    def _start(self) -> str | None:
        """Start a worker and wait until it answers a ping; returns why it could not start, else None."""
        from xe_forge.verify.worker import child_main

        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        with _environment(scrubbed_environ()):
            proc = ctx.Process(target=child_main, args=(child, self.device_kind, self.target), daemon=True,
                               name="xe-forge-eval")
            proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        try:
            parent.send({"op": "ping", "candidate_path": "", "reference_path": ""})
            if parent.poll(STARTUP_TIMEOUT) and parent.recv().get("pong"):
                return None
            return f"the worker did not start within {STARTUP_TIMEOUT:.0f} s"
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            return "the worker failed to start: " + self._death_reason()

    def run(self, job: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one job; returns its result, or {'crash': reason} when the worker died or hung."""
        reason = None
        if self._proc is None or not self._proc.is_alive():
            reason = self._start()
        limit = self.timeout if timeout is None else timeout
        try:
            if reason is None:
                self._conn.send(job)
                if self._conn.poll(limit):
                    result = self._conn.recv()
                    if result.get("restart"):  # the worker saw itself patched: never reuse it
                        self.kill()
                        self.restarts += 1
                    return result
                reason = f"timed out after {limit:.0f} s (hang or very slow kernel); the worker was killed"
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            reason = self._death_reason()
        self.kill()
        self.restarts += 1
        return {"crash": reason}

    def _death_reason(self) -> str:
        if self._proc is not None:
            self._proc.join(timeout=5)
            code = self._proc.exitcode
            if code is not None and code < 0:
                with contextlib.suppress(ValueError):
                    return f"the worker process died from signal {signal.Signals(-code).name} (crash or GPU fault)"
            return f"the worker process exited with code {code} (crash or GPU fault)"
        return "the worker process is gone"

    def kill(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(timeout=10)
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
        self._proc = self._conn = None

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            with contextlib.suppress(OSError, BrokenPipeError):
                self._conn.send(None)
            self._proc.join(timeout=10)
        self.kill()
