"""A run ended by SIGTERM (a job's time limit, `timeout`) ends as Ctrl-C does: the report says it stopped,
the best kernel verified so far is on disk and named, and the command that continues it is printed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xe_forge.pipeline.run import terminate_as_interrupt

EXAMPLE = Path(__file__).parents[2] / "examples" / "12_Gemm_Multiply_LeakyReLU" / "kernel.py"


def test_sigterm_inside_a_run_is_an_interrupt_and_the_handler_is_restored_after():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), terminate_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the signal arrives between bytecodes
    assert signal.getsignal(signal.SIGTERM) is before


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
