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


COMMON_SEEDS = (0, 1, 42, 123, 1234, 2024, 3407)  # what scripts and benchmark harnesses seed


def construction_seed(drawn: int) -> int:
    """The seed the candidate's model is built under, made to look like production's (red team 4, R6):
    a 62-bit HMAC value told a check from a script (`torch.initial_seed() >= 2**32` in `__init__`).
    Drawn in secret: a 64-bit value (what an unseeded process reports), a seed scripts use, or a 32-bit
    value, so no rule on the seed separates a check from a user's run."""
    choice, value = drawn % 3, drawn >> 2
    if choice == 0:
        return (value * 0x9E3779B97F4A7C15) % (1 << 64)  # spread over 64 bits, as torch's own draw
    if choice == 1:
        return COMMON_SEEDS[value % len(COMMON_SEEDS)]
    return value % (1 << 32)
