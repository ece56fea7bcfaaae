"""One GPU, several xe-forge processes: timing is exclusive, other GPU work is shared.

A batch runs several problems per GPU, and a user may run two optimizes at once: kernels another
process runs during a timed chunk would be charged to whatever is being timed. So a process that
times on a device holds that device's lock exclusively for the timed section, and a process that
runs other kernels there (correctness trials, comparisons, a lowering's autotuning) holds it shared.
A turnstile gives a waiting timer priority over new shared holders, so a busy batch cannot starve it.
The locks are flock(2) on files in the temporary directory (XE_FORGE_LOCK_DIR overrides): a process
that dies releases them. Within one process the lock is held once; asking for exclusive while shared
is held (or the reverse) is a programming error, not a wait.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def lock_dir() -> Path:
    return Path(os.environ.get("XE_FORGE_LOCK_DIR") or tempfile.gettempdir())


class DeviceLock:
    """The cross-process lock of one device, e.g. `DeviceLock("cuda-0")`."""

    def __init__(self, name: str) -> None:
        base = lock_dir() / f"xe-forge-{name}"
        self.turnstile, self.resource = Path(f"{base}.turn.lock"), Path(f"{base}.lock")
        self._mode: str | None = None
        self._depth = 0
        # seconds this process waited for the lock, by mode: a run's report shows time lost to other
        # processes on the GPU (a lowering's autotuning holds it shared for tens of seconds)
        self.waited: dict[str, float] = {"shared": 0.0, "exclusive": 0.0}

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """For a timed section: waits until no other process runs kernels on the device."""
        if self._reenter("exclusive"):
            with self._nested():
                yield
            return
        asked = time.monotonic()
        with _flock(self.turnstile, fcntl.LOCK_EX), _flock(self.resource, fcntl.LOCK_EX), \
                self._held("exclusive", asked):
            yield

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """For kernels that are not timed: any number of processes at once, never during a timed section."""
        if self._reenter("shared"):
            with self._nested():
                yield
            return
        asked = time.monotonic()
        with _flock(self.turnstile, fcntl.LOCK_EX):
            pass  # queue behind a timer that is waiting
        with _flock(self.resource, fcntl.LOCK_SH), self._held("shared", asked):
            yield

    def _reenter(self, mode: str) -> bool:
        if self._mode is None:
            return False
        if self._mode != mode:
            raise RuntimeError(f"the device lock is held {self._mode} by this process; {mode} was asked")
        return True

    @contextlib.contextmanager
    def _nested(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    @contextlib.contextmanager
    def _held(self, mode: str, asked: float) -> Iterator[None]:
        self.waited[mode] += time.monotonic() - asked
        self._mode, self._depth = mode, 1
        try:
            yield
        finally:
            self._mode, self._depth = None, 0


_LOCKS: dict[str, DeviceLock] = {}


def device_lock(name: str) -> DeviceLock:
    """The one lock object per device in this process (two would deadlock each other)."""
    if name not in _LOCKS:
        _LOCKS[name] = DeviceLock(name)
    return _LOCKS[name]


class NoLock:
    """Devices that time nothing (the CPU): nothing to coordinate."""

    waited: dict[str, float] = {}  # noqa: RUF012 - never written

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        yield

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        yield


@contextlib.contextmanager
def _flock(path: Path, how: int) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, how)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
