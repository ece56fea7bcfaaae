"""The cross-process device lock: timed sections exclusive, other GPU work shared, timers first."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import pytest

from xe_forge.targets.device_lock import DeviceLock, device_lock


def hold(lock_dir: str, mode: str, seconds: float, log: str, tag: str, delay: float = 0.0) -> None:
    import os

    os.environ["XE_FORGE_LOCK_DIR"] = lock_dir
    time.sleep(delay)
    lock = DeviceLock("test-0")
    with getattr(lock, mode)():
        with open(log, "a") as f:
            f.write(f"{tag} in {time.monotonic():.3f}\n")
        time.sleep(seconds)
        with open(log, "a") as f:
            f.write(f"{tag} out {time.monotonic():.3f}\n")


def events(log: Path) -> list[tuple[str, str, float]]:
    rows = [line.split() for line in log.read_text().splitlines()]
    return sorted(((tag, what, float(t)) for tag, what, t in rows), key=lambda r: r[2])


def run_all(tmp_path: Path, plan: list[tuple[str, float, str, float]]) -> list[tuple[str, str, float]]:
    log = tmp_path / "log.txt"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=hold, args=(str(tmp_path), mode, secs, str(log), tag, delay))
             for mode, secs, tag, delay in plan]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return events(log)


def test_shared_holders_overlap_and_an_exclusive_one_waits_for_them(tmp_path: Path):
    got = run_all(tmp_path, [("shared", 0.8, "a", 0.0), ("shared", 0.8, "b", 0.0), ("exclusive", 0.1, "t", 0.3)])
    order = [(tag, what) for tag, what, _ in got]
    assert order.index(("b", "in")) < order.index(("a", "out")), "two shared holders run at once"
    t_in = order.index(("t", "in"))
    assert t_in > order.index(("a", "out")) and t_in > order.index(("b", "out")), "the timer waited for both"


def test_a_waiting_timer_goes_before_later_shared_holders(tmp_path: Path):
    got = run_all(tmp_path, [("shared", 0.8, "a", 0.0), ("exclusive", 0.5, "t", 0.2), ("shared", 0.1, "late", 0.4)])
    order = [(tag, what) for tag, what, _ in got]
    assert order.index(("late", "in")) > order.index(("t", "out")), "no new shared holder while a timer waits"


def test_the_lock_is_reentrant_in_one_mode_and_refuses_to_switch(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XE_FORGE_LOCK_DIR", str(tmp_path))
    lock = device_lock("reentrant-0")
    assert device_lock("reentrant-0") is lock
    with lock.shared(), lock.shared():
        with pytest.raises(RuntimeError, match="held shared"), lock.exclusive():
            pass
    with lock.exclusive():
        pass


def test_the_seconds_waited_for_another_process_are_counted(tmp_path: Path, monkeypatch):
    """A run's phase_seconds show time lost to other processes on the GPU ('device lock exclusive'):
    on an H200 two optimizes side by side waited 10-38 s per candidate for each other's lowering."""
    monkeypatch.setenv("XE_FORGE_LOCK_DIR", str(tmp_path))
    ctx = mp.get_context("spawn")
    other = ctx.Process(target=hold, args=(str(tmp_path), "shared", 1.0, str(tmp_path / "log.txt"), "o"))
    other.start()
    deadline = time.monotonic() + 20
    while not (tmp_path / "log.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    lock = DeviceLock("test-0")
    with lock.shared():  # shared with the other holder: no wait
        pass
    with lock.exclusive():
        pass
    other.join(30)
    assert lock.waited["shared"] < 0.3
    assert 0.5 < lock.waited["exclusive"] < 5.0
