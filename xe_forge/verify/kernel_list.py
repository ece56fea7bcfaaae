"""The GPU kernel list: which kernels a checked call launched that no Triton launch and no torch op the
audit accepted accounts for (CUDA's profiler; evidence only when it condemns). The dispatch audit sees
torch's ops; this sees what reached the device, so work hidden from the audit (a library call inside a
launch window) still shows up as a kernel of its own.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from xe_forge.verify.audit import TRITON_LABEL, WorkAudit


@contextlib.contextmanager
def kernel_profile(enabled: bool) -> Iterator[Any]:
    """A CUDA profiler around the call when asked and possible; yields the profiler or a reason it is off."""
    if not enabled:
        yield ""
        return
    try:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as exc:  # no CUPTI, or a profiler already running
        yield f"skipped: the profiler did not start ({type(exc).__name__})"
        return
    try:
        yield prof
    finally:
        prof.__exit__(None, None, None)


def foreign_kernels(prof: Any, audit: WorkAudit, triton_names: set[str]) -> list[str]:
    """GPU kernels launched under neither a Triton launch nor a torch op the audit accepted."""
    accounted: set[str] = set()
    launched: set[str] = set()
    for evt in prof.events():
        for kernel in getattr(evt, "kernels", []):
            (accounted if _accounted(evt, audit) else launched).add(kernel.name)
        if _is_device_kernel(evt):
            launched.add(evt.name)
    if os.environ.get(DUMP_ENV):
        _dump(prof, audit, launched & accounted)
    return sorted(k for k in launched - accounted if not any(k == t or k.startswith(t + "_") for t in triton_names))


DUMP_ENV = "XE_FORGE_KERNEL_LIST_DUMP"  # a folder: each profiled call's kernels with the ops that launched them


def _dump(prof: Any, audit: WorkAudit, by_name: set[str]) -> None:
    """A diagnosis aid for the GPU kernel list (benchmarks/): every kernel of the call with the chain of
    ops above it and whether that chain is accounted for, the ops the audit accepted, and the kernel
    names that count as accounted only because another launch of that name was."""
    import json

    rows = []
    for evt in prof.events():
        for kernel in getattr(evt, "kernels", []):
            chain, owner = [], evt
            while owner is not None:
                chain.append(owner.name)
                owner = owner.cpu_parent
            rows.append({"kernel": kernel.name[:160], "chain": chain, "accounted": _accounted(evt, audit)})
    folder = Path(os.environ[DUMP_ENV])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{os.getpid()}-{len(list(folder.iterdir()))}.json"
    path.write_text(json.dumps({"ok_ops": sorted(audit.ok_ops), "by_name_only": sorted(by_name), "kernels": rows}))


def _accounted(evt: Any, audit: WorkAudit) -> bool:
    """Whether any enclosing range is a Triton launch or an aten op the audit accepted (the outermost op
    is the one the dispatch mode saw; `aten::copy_` may run inside the `aten::_to_copy` it accepted)."""
    owner = evt
    while owner is not None:
        name = owner.name
        if name.startswith(TRITON_LABEL) or (name.startswith("aten::") and name[len("aten::"):] in audit.ok_ops):
            return True
        owner = owner.cpu_parent
    return False


def _is_device_kernel(evt: Any) -> bool:
    """A kernel on the device timeline; a profiler range (`record_function`, mirrored there as a
    user annotation under the same name, as our own Triton labels are) is not one."""
    kind = str(getattr(evt, "device_type", "")).rsplit(".", 1)[-1]
    if kind not in ("CUDA", "XPU") or getattr(evt, "is_user_annotation", False) or evt.name.startswith(TRITON_LABEL):
        return False
    return "Memcpy" not in evt.name and "Memset" not in evt.name
