"""Outputs over CUDA IPC (verify/transport.py) between two processes, as the runner and the judge use them.

Exit 0 when the judge's copy equals the runner's tensors (a strided view included), after the runner
overwrote its own outputs; run first in a GPU call so a broken IPC path falls back to files.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from xe_forge.verify.transport import is_ipc, read_outputs, write_outputs

if len(sys.argv) == 3 and sys.argv[1] == "read":
    got = read_outputs(sys.argv[2], 1 << 34, "cuda")
    want = torch.arange(4096.0, device="cuda").reshape(64, 64)
    ok = torch.equal(got[0], want) and torch.equal(got[1], want.t()[3:, 5:]) and got[2] == 7
    print("judge copy equal:", ok)
    sys.exit(0 if ok else 1)
with tempfile.TemporaryDirectory() as tmp:
    path = str(Path(tmp) / "out.pt")
    base = torch.arange(4096.0, device="cuda").reshape(64, 64)
    outs = [base.clone(), base.clone().t()[3:, 5:], 7]
    write_outputs(outs, path, ipc=True)
    assert is_ipc(path), "the runner wrote a file, not IPC records"
    rc = subprocess.run([sys.executable, __file__, "read", path]).returncode
    outs[0].fill_(-1)
    print("ipc smoke", "ok" if rc == 0 else "FAILED")
    sys.exit(rc)
