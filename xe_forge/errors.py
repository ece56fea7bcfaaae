"""The ways a command can stop short, each with its exit code (README, "Exit codes").

The CLI turns a ForgeError into one line on stderr and its exit code; nothing else in the package
prints tracebacks for expected failures.
"""

from __future__ import annotations


class ForgeError(Exception):
    """A failure the user can act on, with the exit code the CLI returns."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class InputError(ForgeError):
    """Bad input: missing file, syntax error, malformed spec, kernel failing on its own inputs."""

    exit_code = 2


class UnverifiableProblem(InputError):
    """A reference whose output no kernel can be told apart from a constant: nothing to verify against."""

    def __init__(self, message: str, *, flags: list[str], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.flags = flags


class SignatureMismatch(InputError):
    """A kernel's Model constructor or forward cannot take what its reference's are given (problem/signature.py).

    Its own class because `spec init` must tell it from other bad input: a spec written for such a pair is
    removed, not left behind."""


class EnvError(ForgeError):
    """Environment: no such device, toolchain missing, LLM unreachable when one was asked for."""

    exit_code = 3


class Interrupted(ForgeError):
    """Ctrl-C during a run: the run is saved and can be resumed (the shell's code for SIGINT)."""

    exit_code = 130
