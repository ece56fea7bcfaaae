"""The GPU kernel list's one profiler session (verify/kernel_list.py) on a CUDA device, in ~20 s:

    python benchmarks/kernel_list_gpu.py OUT_DIR

With cuDNN loaded (a convolution first), 11 checked calls in one session, against 11 sessions of one
call each (the old way): seconds per call, and whether the list still finds a cuBLAS GEMM that no
audited op launched in call 7 of 11, while the same GEMM run between calls (the harness's own work)
stays out of it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from xe_forge.verify.kernel_list import KernelSession


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    dev = "cuda:0"
    x, w = torch.randn(8, 16, 64, 64, device=dev), torch.randn(16, 16, 3, 3, device=dev)
    a = torch.randn(512, 512, device=dev)
    torch.nn.functional.conv2d(x, w)  # cuDNN's modules loaded, as a check of a convolution has them
    torch.cuda.synchronize()
    result: dict[str, object] = {}

    t0 = time.perf_counter()
    for _ in range(11):  # the old way: one session per checked call
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            torch.nn.functional.conv2d(x, w)
            torch.cuda.synchronize()
        prof.events()
    result["sessions_11_s"] = round(time.perf_counter() - t0, 3)

    session = KernelSession()
    t0 = time.perf_counter()
    for i in range(11):
        with session.collect(f"shape{i}/t0") as off:
            torch.nn.functional.conv2d(x, w)  # accounted: the call's audit accepted the convolution
            if i == 6:
                a @ a  # launched by no op the audit accepted
            torch.cuda.synchronize()
        session.account(f"shape{i}/t0", {"cudnn_convolution", "convolution", "_convolution", "conv2d"}, set())
        (a @ a).sum()  # between calls: the harness's work, not collected
        torch.cuda.synchronize()
    status, foreign = session.finish()
    result["one_session_11_s"] = round(time.perf_counter() - t0, 3)
    result.update(off=off, status=status, foreign=foreign)
    ok = status == "checked" and list(foreign) == ["shape6/t0"] and foreign["shape6/t0"]
    result["catches_call_7_only"] = bool(ok)
    print(json.dumps(result, indent=1))
    (out / "kernel_list.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
