"""Lay the examples out as a KernelBench level directory: <id>_<Ops>.py = the reference file.

    python benchmarks/make_problems.py OUT_DIR
"""

import shutil
import sys
from pathlib import Path

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
for d in sorted(Path("examples").iterdir()):
    if (d / "kernel_pytorch.py").is_file():
        shutil.copyfile(d / "kernel_pytorch.py", out / f"{d.name}.py")
print(len(list(out.glob("*.py"))), "problems in", out)
