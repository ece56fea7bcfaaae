"""The cross-process device lock: timed sections exclusive, other GPU work shared, timers first."""

from __future__ import annotations

import fcntl
import multiprocessing as mp
import os
import threading
import time
from pathlib import Path

import pytest

from xe_forge.targets.device_lock import DeviceLock, device_lock


def hold(lock_dir: str, mode: str, seconds: float, log: str, tag: str, release: str | None = None) -> None:
    """Holds the lock `seconds`, or until the file `release` appears (the test says when)."""
    os.environ["XE_FORGE_LOCK_DIR"] = lock_dir
    lock = DeviceLock("test-0")
    with getattr(lock, mode)():
        with open(log, "a") as f:
            f.write(f"{tag} in {time.monotonic():.3f}\n")
        until = time.monotonic() + (30.0 if release else seconds)
        while time.monotonic() < until and not (release and Path(release).exists()):
            time.sleep(0.01)
        with open(log, "a") as f:
            f.write(f"{tag} out {time.monotonic():.3f}\n")


def events(log: Path) -> list[tuple[str, str, float]]:
    rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return sorted(((tag, what, float(t)) for tag, what, t in rows), key=lambda r: r[2])


class Stage:
    """Processes started one by one on observed events, not on delays: a loaded CI machine takes
    seconds to spawn one, and a delay-staged order then tests the spawner, not the lock."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir, self.log, self.procs = tmp_path, tmp_path / "log.txt", []

    def start(self, tag: str, mode: str) -> None:
        release = str(self.dir / f"release-{tag}")
        p = mp.get_context("spawn").Process(target=hold, args=(str(self.dir), mode, 0.0, str(self.log), tag, release))
        p.start()
        self.procs.append(p)

    def release(self, tag: str) -> None:
        (self.dir / f"release-{tag}").touch()

    def logged(self, tag: str, what: str = "in") -> bool:
        return any((t, w) == (tag, what) for t, w, _ in events(self.log))

    def turnstile_taken(self) -> bool:
        """A timer queues by holding the turnstile while it waits for the resource."""
        fd = os.open(DeviceLock("test-0").turnstile, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def order(self) -> list[tuple[str, str]]:
        for tag in ("a", "b", "t", "late", "o"):
            self.release(tag)
        for p in self.procs:
            p.join(30)
            assert p.exitcode == 0
        return [(tag, what) for tag, what, _ in events(self.log)]


def until(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_shared_holders_overlap_and_an_exclusive_one_waits_for_them(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XE_FORGE_LOCK_DIR", str(tmp_path))
    st = Stage(tmp_path)
    st.start("a", "shared"), st.start("b", "shared")
    until(lambda: st.logged("a") and st.logged("b"), "two shared holders at once")
    st.start("t", "exclusive")
    until(st.turnstile_taken, "the timer to queue")
    time.sleep(0.3)  # were the lock broken, the timer would get in now
    assert not st.logged("t"), "the timer waits while shared holders run"
    st.release("a"), st.release("b")
    order = st.order()
    t_in = order.index(("t", "in"))
    assert t_in > order.index(("a", "out")) and t_in > order.index(("b", "out")), "the timer waited for both"


def test_a_waiting_timer_goes_before_later_shared_holders(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XE_FORGE_LOCK_DIR", str(tmp_path))
    st = Stage(tmp_path)
    st.start("a", "shared")
    until(lambda: st.logged("a"), "the first shared holder")
    st.start("t", "exclusive")
    until(st.turnstile_taken, "the timer to queue")
    st.start("late", "shared")
    time.sleep(1.0)  # time for the late holder to ask; were there no turnstile, it would get in now
    assert not st.logged("late"), "no new shared holder while a timer waits"
    st.release("a")
    until(lambda: st.logged("t"), "the timer after the first holder")
    assert not st.logged("late"), "the timer goes before the late shared holder"
    order = st.order()
    assert order.index(("late", "in")) > order.index(("t", "out"))


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
    st = Stage(tmp_path)
    st.start("o", "shared")
    until(lambda: st.logged("o"), "the other holder")
    lock = DeviceLock("test-0")
    with lock.shared():  # shared with the other holder: no wait
        pass
    threading.Timer(1.0, st.release, args=("o",)).start()
    with lock.exclusive():
        pass
    st.order()
    assert lock.waited["shared"] < 0.3
    assert 0.9 < lock.waited["exclusive"] < 10.0
