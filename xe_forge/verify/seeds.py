"""Secret seeds: unknowable to a candidate, yet the same when a run is resumed.

Every seed an evaluation uses (weights, their perturbation, each trial's inputs, each timed call's
inputs, which timed calls are sampled) is an HMAC of a secret and the evaluation's identity (the
candidate's source, the problem, a counter). The secret lives with the evaluator: a fresh random
one for a throw-away evaluator (`check`), or a file in the run's work directory, so a resumed run
replays the same draws and its refine prompts (which quote the verdict) hit the LLM cache. A
candidate cannot compute an HMAC without the secret, and the static scan keeps it from files.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import os
import secrets
from pathlib import Path

SECRET_FILE = ".verifier-secret"


def run_secret(workdir: Path, *, persist: bool) -> bytes:
    """The work directory's secret (created on first use, owner-only), or a fresh one."""
    if not persist:
        return secrets.token_bytes(32)
    path = workdir / SECRET_FILE
    if path.is_file():
        data = path.read_bytes()
        if len(data) == 32:
            return data
    data = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return data


class SeedStream:
    """Seeds for one evaluation: HMAC(secret, identity, n) for n = 0, 1, 2, ..."""

    def __init__(self, secret: bytes, *identity: str) -> None:
        self._key = secret
        self._identity = hashlib.sha256("\0".join(identity).encode()).digest()
        self._counter = itertools.count()

    def draw(self) -> int:
        digest = hmac.new(self._key, self._identity + next(self._counter).to_bytes(8, "big"), "sha256").digest()
        return int.from_bytes(digest[:8], "big") >> 2  # 62 bits

    def fraction(self) -> float:
        return self.draw() / float(1 << 62)
