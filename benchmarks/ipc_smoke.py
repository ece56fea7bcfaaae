"""Outputs over CUDA IPC (verify/transport.py) between two processes, as the runner and the judge use them,
and the judge's inputs the other way (a Shipment from its private memory pool).

Exit 0 when the judge's copy equals the runner's tensors (a strided view included), after the runner
overwrote its own outputs, and the runner's copy of shipped inputs has their values and strides (an
expanded row, a transposed matrix); run first in a GPU call so a broken IPC path falls back to files.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from xe_forge.verify.transport import Shipment, is_ipc, load_shipped, read_outputs, write_outputs


def shipped_inputs() -> list:
    base = torch.arange(4096.0, device="cuda").reshape(64, 64)
    return [base[:1].expand(64, 64), base.t().contiguous().t(), 3]


if len(sys.argv) == 3 and sys.argv[1] == "inputs":
    got, want = load_shipped(sys.argv[2], "cuda"), shipped_inputs()
    ok = all(torch.equal(g, w) and g.stride() == w.stride() for g, w in zip(got[:2], want[:2], strict=True)) and got[2] == 3
    print("runner copy of shipped inputs equal, strides kept:", ok, [g.stride() for g in got[:2]])
    sys.exit(0 if ok else 1)

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
    ship, sent = Shipment(), str(Path(tmp) / "in.pt")
    ship.write(shipped_inputs(), sent, "smoke")
    assert is_ipc(sent), "the judge wrote a file, not IPC records"
    rc = rc or subprocess.run([sys.executable, __file__, "inputs", sent]).returncode
    ship.release("smoke")
    print("ipc smoke", "ok" if rc == 0 else "FAILED")
    sys.exit(rc)
