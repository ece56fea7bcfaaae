"""The parent's handle on one worker process: start it clean, send JSON requests, survive what it does.

A worker is `python -m xe_forge.verify.child ROLE ...` with two pipes of its own (requests in,
replies out), an environment without API keys and tokens, a temporary working directory, and its
stdout/stderr in a log file (a candidate's prints never reach the user's terminal; the log's tail
explains a crash). Replies are JSON parsed into the expected pydantic model: a worker that sends
anything else, dies, or hangs past the timeout is killed and replaced for the next request.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from xe_forge.verify.protocol import MAX_MESSAGE, Ping, Pong, Reply

SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
STARTUP_TIMEOUT = 300.0  # imports and device initialisation; never charged to a job's timeout
R = TypeVar("R", bound=Reply)


class WorkerGone(Exception):
    """The worker crashed, hung, or answered nonsense; it has been killed."""


def envelope(rid: int, message: BaseModel) -> bytes:
    """A message with its request id: a reply must echo the id of the request it answers."""
    return json.dumps({"rid": rid, "msg": message.model_dump(mode="json")}).encode()


def opened(data: bytes) -> tuple[int, object]:
    doc = json.loads(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("rid"), int):
        raise ValueError("not an envelope")
    return doc["rid"], doc.get("msg")


def scrubbed_environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not any(m in k.upper() for m in SECRET_MARKERS)}


def bytecode_kept() -> bool:
    """Whether a fresh interpreter finds torch's byte-code: where it does not, each worker start compiled
    ~1,900 modules again (5 s per worker on an H200 host whose torch shipped without any and whose
    environment forbade writing it)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return True
    return os.path.exists(importlib.util.cache_from_source(spec.origin))


def pycache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "xe-forge" / "pycache"


def _child_environ() -> dict[str, str]:
    env = scrubbed_environ()
    if not bytecode_kept() and "PYTHONPYCACHEPREFIX" not in env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # kept in xe-forge's own cache, beside nobody's sources
        env["PYTHONPYCACHEPREFIX"] = str(pycache_dir())
    root = str(Path(__file__).resolve().parents[2])  # the directory holding the xe_forge package
    env["PYTHONPATH"] = os.pathsep.join([root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Worker:
    """One warm worker process of one role (`judge` or `runner`) for one device."""

    def __init__(self, role: str, device_kind: str, target: str, *, timeout: float = 300.0,
                 logdir: Path | None = None, name: str | None = None) -> None:
        self.role = role
        self.name = name or role  # a second runner (the baseline's process) keeps the runner's code
        self.device_kind = device_kind
        self.target = target
        self.timeout = timeout
        self.logdir = Path(logdir or tempfile.gettempdir())
        self._proc: subprocess.Popen | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self._log: Path | None = None
        self._cwd: tempfile.TemporaryDirectory | None = None
        self._ready = False
        self._rid = itertools.count(1)
        self.restarts = 0
        self.spent: dict[str, float] = {}  # "<role> <request>" -> seconds waited, start-up included

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the process if it is not running; `ensure()` waits for its answer (start both, then wait)."""
        if self._proc is None or self._proc.poll() is not None:
            self.kill()
            self._start()

    def _start(self) -> None:
        """Spawn the process and send it a ping."""
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        self._cwd = tempfile.TemporaryDirectory(prefix=f"xe-forge-{self.name}-")
        self._log = self.logdir / f"{self.name}-{os.getpid()}-{int(time.time() * 1000)}.log"
        with open(self._log, "wb") as log:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "xe_forge.verify.child", self.role, self.device_kind, self.target,
                 str(req_r), str(rep_w)],
                pass_fds=(req_r, rep_w), env=_child_environ(), cwd=self._cwd.name, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT)  # the caller's process group: killing it kills the worker
        os.close(req_r)
        os.close(rep_w)
        self._send, self._recv = Connection(req_w, readable=False), Connection(rep_r, writable=False)
        self._ready = False
        self._expect = next(self._rid)
        self._send.send_bytes(envelope(self._expect, Ping()))

    def ensure(self) -> str | None:
        """Wait until the worker answers its ping; returns why it could not start, else None."""
        if self._ready and self._proc is not None and self._proc.poll() is None:
            return None
        self.start()
        try:
            self._read(Pong, STARTUP_TIMEOUT)
        except WorkerGone as gone:
            return f"the {self.name} worker failed to start: {gone}"
        self._ready = True
        return None

    def call(self, request: BaseModel, reply: type[R], timeout: float | None = None) -> R:
        """One request, one reply; raises WorkerGone (after killing the worker) on a crash or hang."""
        if self._recv is not None and self._ready and self._recv.poll(0):
            self._fail()  # something it sent unasked: a fresh process for this request
        started = time.monotonic()
        try:
            return self._call(request, reply, timeout)
        finally:
            key = f"{self.name} {type(request).__name__}"
            self.spent[key] = self.spent.get(key, 0.0) + time.monotonic() - started

    def _call(self, request: BaseModel, reply: type[R], timeout: float | None) -> R:
        reason = self.ensure()
        if reason:
            raise WorkerGone(reason)
        self._expect = next(self._rid)
        try:
            self._send.send_bytes(envelope(self._expect, request))
        except OSError:
            raise WorkerGone(self._death_reason()) from None
        answer = self._read(reply, self.timeout if timeout is None else timeout)
        if answer.patched:  # the worker saw itself patched: never reuse it
            self.kill()
            self.restarts += 1
        return answer

    def fence(self) -> None:
        """After an evaluation: a ping that must be the next thing answered. Anything the worker still
        had to say (a reply it was not asked for) gets it replaced before the next candidate."""
        if self._proc is None or not self._ready:
            return
        try:
            self.call(Ping(), Pong)
        except WorkerGone:
            pass

    def _read(self, reply: type[R], limit: float) -> R:
        try:
            if not self._recv.poll(limit):
                self._fail()
                raise WorkerGone(f"timed out after {limit:.0f} s (hang or very slow kernel); the worker was killed")
            data = self._recv.recv_bytes(MAX_MESSAGE)
        except (EOFError, OSError):
            reason = self._death_reason()
            self._fail()
            raise WorkerGone(reason) from None
        try:
            rid, body = opened(data)
            answer = reply.model_validate(body)
        except (ValueError, ValidationError):
            self._fail()
            raise WorkerGone(f"the {self.name} worker sent a malformed reply") from None
        if rid != self._expect:  # a reply forged or left over: nothing from this process is believed now
            self._fail()
            raise WorkerGone(f"the {self.name} worker answered out of turn; it was killed")
        return answer

    def _fail(self) -> None:
        self.kill()
        self.restarts += 1

    def _death_reason(self) -> str:
        if self._proc is None:
            return "the worker process is gone"
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=5)
        code = self._proc.returncode
        tail = self.log_tail()
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                return (f"the worker process died from signal {signal.Signals(-code).name} (crash or GPU fault)"
                        + (f"; its last output: {tail}" if tail else ""))
        return f"the worker process exited with code {code} (crash or GPU fault)" + (f"; its last output: {tail}"
                                                                                     if tail else "")

    def log_tail(self, limit: int = 600) -> str:
        if self._log is None or not self._log.exists():
            return ""
        with contextlib.suppress(OSError):
            return " ".join(self._log.read_text(errors="replace")[-limit:].split())
        return ""

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def kill(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    self._proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=10)
        for conn in (self._send, self._recv):
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.close()
        if self._cwd is not None:
            with contextlib.suppress(OSError):
                self._cwd.cleanup()
        self._proc = self._send = self._recv = self._cwd = None
        self._ready = False

    def ask_exit(self) -> None:
        """Tell the worker to exit without waiting for it (several workers then exit at once)."""
        if self._proc is not None and self._proc.poll() is None and self._send is not None:
            with contextlib.suppress(OSError):
                self._send.send_bytes(b"")  # an empty message: exit

    def close(self, timeout: float = 10.0) -> None:
        if self._proc is not None and self._proc.poll() is None and self._send is not None:
            self.ask_exit()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=max(timeout, 0.0))
        self.kill()
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.unlink()
