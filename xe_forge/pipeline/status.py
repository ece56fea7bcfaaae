"""A run's final status, said once: what the report, the exit code and a resumed batch agree on.

Where speed is not measured (the CPU) a changed kernel is at most "verified correct, speed not
measured"; only a GPU timing makes it "improved". Exit code 0 for those two (README, "Exit codes").
"""

from __future__ import annotations

IMPROVED = "improved"
CORRECT_UNTIMED = "verified correct, speed not measured"
NO_IMPROVEMENT = "no improvement"
NO_MEASURED_IMPROVEMENT = "no measured improvement"
FINAL_FAILED = "final verification failed"
STATUSES = (IMPROVED, CORRECT_UNTIMED, NO_IMPROVEMENT, NO_MEASURED_IMPROVEMENT, FINAL_FAILED)


def exit_code(status: str) -> int:
    return 0 if status in (IMPROVED, CORRECT_UNTIMED) else 1
