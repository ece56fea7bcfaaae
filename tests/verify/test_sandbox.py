"""The candidate's process: survives hangs, crashes and patching candidates, and never sees secrets.

These tests use their own evaluator with a short timeout: each one breaks (or retires) the worker
on purpose, and the NEXT evaluation on the same evaluator must work, as in a real run. Hacks the
static scan already refuses run with it switched off: the process boundary must hold on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.verify import sandbox
from xe_forge.verify.evaluate import Evaluator
from xe_forge.verify.sandbox import scrubbed_environ

from .helpers import finding, source, unguarded

HANG_TIMEOUT = 10.0


@pytest.fixture(scope="module")
def short_fuse() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=HANG_TIMEOUT, trials=1) as ev:
        yield ev


def _recovers(ev: Evaluator, linear, restarts_before: int) -> None:
    """The evaluator replaced its worker once, and the replacement verifies an honest kernel."""
    assert ev.worker.restarts == restarts_before + 1
    verdict = ev.evaluate(source("linear/good.py"), linear)
    assert verdict.passed, verdict.feedback()


def test_hard_crash_is_a_failure_and_the_next_evaluation_works(short_fuse: Evaluator, linear):
    before = short_fuse.worker.restarts
    verdict = short_fuse.evaluate(source("hacks/abort.py"), linear)  # a crash is allowed: it is a failure
    assert not verdict.passed and verdict.stage_failed == "worker"
    assert "SIGABRT" in finding(verdict, "worker").message
    _recovers(short_fuse, linear, before)


@pytest.mark.slow
def test_hang_times_out_and_the_next_evaluation_works(short_fuse: Evaluator, linear):
    short_fuse.evaluate(source("linear/good.py"), linear)  # warm: the timeout must be the candidate's alone
    before = short_fuse.worker.restarts
    verdict = short_fuse.evaluate(source("hacks/hang.py"), linear)
    assert not verdict.passed and verdict.stage_failed == "worker"
    assert "timed out" in finding(verdict, "worker").message
    assert verdict.seconds >= HANG_TIMEOUT
    _recovers(short_fuse, linear, before)


def test_patch_through_an_alias_at_import_fails_and_retires_the_worker(short_fuse: Evaluator, linear):
    # unchecked, this patch makes the reference return zeros, passes the hack, and poisons later runs
    before = short_fuse.worker.restarts
    with unguarded(short_fuse):
        verdict = short_fuse.evaluate(source("hacks/alias_patch.py"), linear)
    assert not verdict.passed and verdict.stage_failed == "import"
    assert "torch.nn.functional.linear" in finding(verdict, "monkey-patch").message
    _recovers(short_fuse, linear, before)


def test_patch_made_inside_forward_fails_and_retires_the_worker(short_fuse: Evaluator, linear):
    before = short_fuse.worker.restarts
    with unguarded(short_fuse):
        verdict = short_fuse.evaluate(source("hacks/forward_patch.py"), linear)
    assert not verdict.passed and verdict.stage_failed == "correctness"
    assert "torch.nn.functional.linear" in finding(verdict, "monkey-patch").message
    _recovers(short_fuse, linear, before)


SECRETS = {"XE_FORGE_API_KEY": "xf-secret", "OPENAI_API_KEY": "sk-test", "HF_TOKEN": "hf_test",
           "AWS_SECRET_ACCESS_KEY": "aws", "DB_PASSWORD": "hunter2"}


def test_worker_environment_has_no_secrets(monkeypatch: pytest.MonkeyPatch, linear):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XE_FORGE_TEST_CONTROL", "visible")  # proves the probe does see the parent's env
    with Evaluator("cpu", timeout=120, trials=1) as ev:  # fresh workers, spawned after setenv
        verdict = ev.evaluate(source("linear/good.py"), linear)
        envs = [Path(f"/proc/{w.pid}/environ").read_bytes() for w in (ev.judge, ev.runner)]
        probe = ev.evaluate(source("hacks/env_probe.py"), linear)
    assert verdict.passed, verdict.feedback()
    assert all(b"XE_FORGE_TEST_CONTROL=visible" in env for env in envs)  # the parent's environment, scrubbed
    assert not any(value.encode() in env for env in envs for value in SECRETS.values())
    # and a kernel file cannot read its environment at all (it would tell a check from production)
    assert probe.stage_failed == "static" and "os.environ" in probe.findings[0].message


def test_scrubbed_environ_drops_keys_tokens_secrets_and_passwords(monkeypatch: pytest.MonkeyPatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("my_api_key_lowercase", "x")
    monkeypatch.setenv("XE_FORGE_TEST_CONTROL", "visible")
    env = scrubbed_environ()
    assert not set(SECRETS) & set(env) and "my_api_key_lowercase" not in env
    assert env["XE_FORGE_TEST_CONTROL"] == "visible"


@pytest.mark.parametrize("role", ["judge", "runner"])
def test_a_terminals_ctrl_c_leaves_the_worker_to_its_parent(role: str, tmp_path: Path):
    """Workers share the caller's process group, so a terminal's Ctrl-C reaches them: they ignore it (no
    traceback of their own, no half-answered request); the parent handles it and ends them."""
    import os
    import signal
    import time

    from xe_forge.verify.protocol import Ping, Pong
    from xe_forge.verify.sandbox import Worker

    worker = Worker(role, "cpu", "intel-xe2", timeout=60, logdir=tmp_path)
    try:
        assert worker.ensure() is None
        pid = worker.pid
        os.kill(pid, signal.SIGINT)
        time.sleep(0.5)
        assert worker.call(Ping(), Pong).pid == pid and worker.restarts == 0
        assert "KeyboardInterrupt" not in worker.log_tail()
    finally:
        worker.close()


def test_workers_keep_byte_code_in_a_cache_where_the_environment_keeps_none(monkeypatch: pytest.MonkeyPatch,
                                                                             tmp_path):
    """Each worker imports torch fresh: with PYTHONDONTWRITEBYTECODE (or a torch without byte-code) every
    start compiled ~1,900 modules again. Workers then keep theirs in xe-forge's cache; a user's own
    PYTHONPYCACHEPREFIX is left alone."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(sandbox, "bytecode_kept", lambda: False)
    env = sandbox._child_environ()
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "xe-forge" / "pycache")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/somewhere/of/mine")
    env = sandbox._child_environ()
    assert env["PYTHONPYCACHEPREFIX"] == "/somewhere/of/mine" and env["PYTHONDONTWRITEBYTECODE"] == "1"
    monkeypatch.delenv("PYTHONPYCACHEPREFIX")
    monkeypatch.setattr(sandbox, "bytecode_kept", lambda: True)  # torch compiled: the user's setting stands
    assert "PYTHONPYCACHEPREFIX" not in sandbox._child_environ()
    assert sandbox._child_environ()["PYTHONDONTWRITEBYTECODE"] == "1"
