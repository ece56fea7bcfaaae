"""A stand-in for `ncu` / `vtune` that replays recorded outputs (tests only).

Configured through FAKE_PROFILER_PLAN, a JSON file holding a list of steps, one per invocation:
{"log": recorded file written to --log-file (ncu), "stdout": recorded file printed, "stderr": text,
 "exit": code, "sleep": seconds (spawning a child that sleeps too), "run_app": true (run the
 profiled command line, as the real profiler would)}. Each invocation appends its argv and whether
 it saw secret-looking environment variables to FAKE_PROFILER_CALLS (JSON lines).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    argv = sys.argv[1:]
    calls = Path(os.environ["FAKE_PROFILER_CALLS"])
    done = len(calls.read_text().splitlines()) if calls.is_file() else 0
    plan = json.loads(Path(os.environ["FAKE_PROFILER_PLAN"]).read_text())
    step = plan[min(done, len(plan) - 1)]
    secrets = sorted(k for k in os.environ if any(m in k.upper() for m in ("KEY", "TOKEN", "SECRET", "PASSWORD")))
    with calls.open("a") as f:
        f.write(json.dumps({"argv": argv, "secrets": secrets, "cwd": os.getcwd(), "pid": os.getpid()}) + "\n")
    if step.get("sleep"):
        child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({step['sleep']})"])
        Path(os.environ["FAKE_PROFILER_CALLS"] + ".child").write_text(str(child.pid))
        time.sleep(step["sleep"])
    if step.get("run_app"):
        app = argv[argv.index("-m") - 1:] if "-m" in argv else argv[argv.index("--") + 1:]
        subprocess.run(app, check=False)
    if step.get("log") and "--log-file" in argv:
        Path(argv[argv.index("--log-file") + 1]).write_text(Path(step["log"]).read_text())
    if step.get("stdout"):
        sys.stdout.write(Path(step["stdout"]).read_text())
    sys.stderr.write(step.get("stderr", ""))
    return int(step.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
