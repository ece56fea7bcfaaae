"""Where a runner's model build goes (issue 25): nn.Linear(8192, 8192) built on the device, timed with a
synchronize, in a bare process and after each step of a runner worker's start-up.

    python benchmarks/diag_build.py
"""

from __future__ import annotations

import time


def build(label: str) -> None:
    import torch

    torch.cuda.synchronize()
    t = time.perf_counter()
    with torch.device("cuda:0"):
        lin = torch.nn.Linear(8192, 8192)
    torch.cuda.synchronize()
    print(f"{label:<40} {1e3 * (time.perf_counter() - t):8.1f} ms  ({lin.weight.device})", flush=True)


def main() -> None:
    import torch

    torch.empty(1, device="cuda:0")
    build("bare")
    torch.manual_seed(3)
    build("after manual_seed")
    from xe_forge.targets import get_device

    device = get_device("cuda")
    device.prepare_process()
    device.open_context()
    build("after prepare_process/open_context")
    import xe_forge.verify.timing  # noqa: F401
    from xe_forge.verify.runner import Runner

    Runner(device)
    build("after Runner(device)")
    torch.manual_seed(3)
    build("after Runner + manual_seed")
    from xe_forge.verify import guarded

    guarded.refusals()
    build("after guarded.refusals()")
    from xe_forge.verify.kernel_list import kernel_profile

    for i in range(3):
        with kernel_profile(True):
            (torch.ones(4, device="cuda:0") * 2).sum()
            torch.cuda.synchronize()
        build(f"after a kernel-list profile ({i})")
        build(f"and once more ({i})")
    torch.manual_seed(3)
    t = time.perf_counter()
    with torch.device("cuda:0"):
        w = torch.empty(8192, 8192)
    a = time.perf_counter()
    w.uniform_(-1, 1)
    b = time.perf_counter()
    torch.cuda.synchronize()
    print(f"empty {1e3 * (a - t):.1f} ms, uniform_ {1e3 * (b - a):.1f} ms, sync {1e3 * (time.perf_counter() - b):.1f} ms")


if __name__ == "__main__":
    main()
