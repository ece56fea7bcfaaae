"""The GPU kernel list: which kernels a checked call launched that no Triton launch and no audited op
accounts for (CUDA only; inside the candidate's process, evidence only when it condemns).

One CUDA profiler session serves a whole check. Why: ending a session tears CUPTI down (torch's default
since 2.7, and the worker asks for it: a CUPTI left attached slows every later launch, timed ones
included) and the next start sets it up again for every module loaded, which cost 1.46 s per start once
cuDNN was loaded (an H200 convolution check: 11 sessions, 16 s of its 19 s in the runner).

The session collects everything from the first checked call until the check ends it (before any timed
call). It is never paused: switching CUDA collection off and on between calls
(`toggle_collection_dynamic`) re-initialised CUPTI as a restart does and dropped the kernel records (an
H100, 2026-12-06). Each checked call runs inside a named range instead, and a kernel belongs to the call
whose range encloses the op that launched it; kernels launched outside every call's range are the
harness's own (state loads, copies, poison fills), and the candidate's code runs only inside calls.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

TRITON_LABEL = "xe_forge.triton:"  # the range count_launches(label=True) opens around each Triton launch
CALL_LABEL = "xe_forge.call:"  # the range around one checked call
HARNESS = "\0harness"  # the owner of kernels launched outside every checked call
Accounts = dict[str, tuple[set[str], set[str]]]  # call tag -> (aten ops the audit accepted, Triton kernel names)


class KernelSession:
    """One profiler session across a check's calls; `finish` ends it and judges every call at once."""

    def __init__(self) -> None:
        self.prof: Any = None
        self.off = ""  # why the kernel list is off ("skipped: ..."), once a start failed
        self.accounts: Accounts = {}
        self.calls = 0

    def fresh_tag(self, base: str) -> str:
        """`base` ("shape/call") made unique in the session: a shape's calls run again in later requests
        (trials, diagnoses) under the same ids, and each run must be judged by its own audit (an
        unpoisoned call's audit has no poison fill; the poisoned one's fills must not be judged by it)."""
        self.calls += 1
        return f"{base}#{self.calls}"

    @contextlib.contextmanager
    def collect(self, tag: str) -> Iterator[str]:
        """The body as checked call `tag`, the session started on first use; yields "" or the reason
        there is no kernel list."""
        from torch.profiler import ProfilerActivity, profile, record_function

        if self.prof is None and not self.off:
            try:
                prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
                prof.__enter__()
                self.prof = prof
            except Exception as exc:  # no CUPTI, or a profiler already running
                self.off = f"skipped: the profiler did not start ({type(exc).__name__})"
        if self.prof is None:
            yield self.off
            return
        with record_function(CALL_LABEL + tag):
            yield ""

    def account(self, tag: str, ok_ops: Iterable[str], triton_names: Iterable[str]) -> None:
        self.accounts[tag] = (set(ok_ops), set(triton_names))

    def finish(self) -> tuple[str, dict[str, list[str]]]:
        """End the session: ("checked", foreign kernels by call tag), or the reason it is off."""
        prof, accounts, off = self.prof, self.accounts, self.off
        self.prof, self.accounts, self.off, self.calls = None, {}, "", 0
        if prof is None:
            return off, {}
        prof.__exit__(None, None, None)
        return "checked", foreign_kernels(prof.events(), accounts)


def foreign_kernels(events: Iterable[Any], accounts: Accounts) -> dict[str, list[str]]:
    """GPU kernels launched under neither a Triton launch nor a torch op its call's audit accepted, by
    call tag. A kernel on the device timeline that the profiler linked to no launching op (tag "")
    counts unless an op somewhere launched a kernel of that name (then it is that launch's, judged
    there). Kernels launched outside every call are the harness's; those of a call that raised (it
    accounted for nothing) are left to the failure it already is."""
    every_triton = set().union(*(names for _, names in accounts.values()))
    linked: set[str] = set()  # every kernel name some op launched, in a call or not
    launched: dict[str, set[str]] = defaultdict(set)
    for evt in events:
        kernels = getattr(evt, "kernels", [])
        if kernels:
            tag = _call_of(evt)
            for kernel in kernels:
                linked.add(kernel.name)
                if tag in accounts and not _accounted(evt, accounts[tag][0]):
                    launched[tag].add(kernel.name)
        if _is_device_kernel(evt):
            launched[""].add(evt.name)
    out: dict[str, list[str]] = {}
    for tag, names in launched.items():
        triton = accounts[tag][1] if tag else every_triton
        if not tag:
            names = names - linked
        left = sorted(k for k in names if not any(k == t or k.startswith(t + "_") for t in triton))
        if left:
            out[tag] = left
    return out


def _call_of(evt: Any) -> str:
    """The tag of the checked call whose range encloses the event (HARNESS if none does)."""
    owner = evt
    while owner is not None:
        if owner.name.startswith(CALL_LABEL):
            return owner.name[len(CALL_LABEL):]
        owner = owner.cpu_parent
    return HARNESS


def _accounted(evt: Any, ok_ops: set[str]) -> bool:
    """Whether any enclosing range is a Triton launch or an aten op the audit accepted (the outermost op
    is the one the dispatch mode saw; `aten::copy_` may run inside the `aten::_to_copy` it accepted)."""
    owner = evt
    while owner is not None:
        name = owner.name
        if name.startswith(TRITON_LABEL) or (name.startswith("aten::") and name[len("aten::"):] in ok_ops):
            return True
        owner = owner.cpu_parent
    return False


def _is_device_kernel(evt: Any) -> bool:
    """A kernel on the device timeline; a profiler range (`record_function`, mirrored there as a
    user annotation under the same name, as our own labels are) is not one."""
    kind = str(getattr(evt, "device_type", "")).rsplit(".", 1)[-1]
    if kind not in ("CUDA", "XPU") or getattr(evt, "is_user_annotation", False) or \
            evt.name.startswith((TRITON_LABEL, CALL_LABEL)):
        return False
    return "Memcpy" not in evt.name and "Memset" not in evt.name
