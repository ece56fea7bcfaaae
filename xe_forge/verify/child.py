"""Entry point of a worker process: `python -m xe_forge.verify.child ROLE DEVICE TARGET REQ_FD REPLY_FD`.

ROLE is `judge` (the reference process) or `runner` (the candidate's process). The device is
prepared once, the role's harness imported before any user code (so the patch guard watches it),
then requests are served until an empty message or the pipe closes. In the runner, a reply that
reports a patch ends the process: nothing measured under a patch is reused.

Workers stay in the caller's process group (a killed batch problem takes them down), so a terminal's
Ctrl-C reaches them too: they ignore it, and the parent, which handles it, kills them on its way out.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from multiprocessing.connection import Connection
from typing import Any


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    role, device_kind, target, req_fd, rep_fd = argv
    recv, send = Connection(int(req_fd), writable=False), Connection(int(rep_fd), readable=False)
    profile_dir = os.environ.get("XE_FORGE_WORKER_PROFILE")  # a diagnosis: where a check's seconds go
    profiler = None
    if profile_dir:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()  # start-up too: the parent books it to the first request's wait
    from xe_forge.targets import get_device
    from xe_forge.verify import protocol as p

    device = get_device(device_kind, target or None)  # as the parent resolves it ("": the device's own)
    device.prepare_process()
    device.open_context()
    if role == "judge":
        from xe_forge.verify.judge import Judge

        server, requests, guarded = Judge(device), p.JUDGE_REQUESTS, False
    else:
        import xe_forge.verify.timing  # noqa: F401  (loaded before any candidate: the guard watches it)
        from xe_forge.verify.runner import Runner

        server, requests, guarded = Runner(device), p.RUNNER_REQUESTS, True
    if profiler is not None:
        profiler.disable()
        try:
            return _serve(recv, send, server, requests, guarded, profiler)
        finally:
            profiler.dump_stats(os.path.join(profile_dir, f"{role}-{os.getpid()}.prof"))
    return _serve(recv, send, server, requests, guarded, None)


def _serve(recv: Connection, send: Connection, server: Any, requests: Any, guarded: bool, profiler: Any) -> int:
    """Answer requests until an empty message or a closed pipe (0), or a reply that reports a patch."""
    from xe_forge.verify import protocol as p
    from xe_forge.verify.sandbox import envelope, opened

    while True:
        try:
            data = recv.recv_bytes()
        except (EOFError, OSError):
            return 0
        if not data:
            return 0
        rid, body = opened(data)
        request = requests.validate_python(body)
        guard = server.guard() if guarded else None
        if profiler is not None:
            profiler.enable()
        try:
            reply = p.Pong(pid=os.getpid()) if request.op == "ping" else server.handle(request)
        except BaseException as exc:  # the worker must answer, whatever the code it runs did
            reply = p.Reply(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-4000:])
        finally:
            if profiler is not None:
                profiler.disable()
        if guard is not None:
            reply.patched = guard.changed()
        send.send_bytes(envelope(rid, reply))
        if reply.patched:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
