"""A run ended by SIGTERM (a job's time limit, `timeout`) ends as Ctrl-C does: the report says it stopped,
the best kernel verified so far is on disk and named, and the command that continues it is printed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "12_Gemm_Multiply_LeakyReLU" / "kernel.py"


def test_sigterm_inside_a_run_is_an_interrupt_and_the_handler_is_restored_after():
    """In a process of its own: the signal is real, and a test runner's worker (pytest-xdist) must not
    receive it."""
    code = ("import os, signal, time\nfrom xe_forge.pipeline.run import terminate_as_interrupt\n"
            "before = signal.getsignal(signal.SIGTERM)\ntry:\n    with terminate_as_interrupt():\n"
            "        os.kill(os.getpid(), signal.SIGTERM)\n        time.sleep(5)\n    print('not interrupted')\n"
            "except KeyboardInterrupt:\n    print('interrupted')\n"
            "print('restored' if signal.getsignal(signal.SIGTERM) is before else 'changed')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["interrupted", "restored"], out.stdout + out.stderr


@pytest.mark.slow
def test_a_terminated_optimize_leaves_its_report_and_best_kernel(tmp_path: Path):
    env = {**os.environ, "XE_FORGE_DEVICE": "cpu", "COLUMNS": "300", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("XE_FORGE_MODEL", None)
    proc = subprocess.Popen([sys.executable, "-m", "xe_forge", "optimize", str(EXAMPLE), "--engine", "rules",
                             "--run-dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    seen = []
    for line in proc.stdout:  # the first stage done: its kernel (improved or not) is behind us
        seen.append(line)
        if "-> " in line and "best so far" in line:
            break
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=120)
    output = "".join(seen) + rest
    assert proc.returncode != 0 and "Traceback" not in output, output
    assert "interrupted: run" in output and "continue with: xe-forge optimize --resume" in output
    (run_dir,) = tmp_path.iterdir()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["status"] == "interrupted", report["status"]
    if "improved" in "".join(seen):
        assert "best verified kernel so far" in output and (run_dir / "best_so_far.py").exists()
