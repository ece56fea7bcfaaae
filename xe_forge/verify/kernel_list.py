"""The GPU kernel list: which kernels a checked call launched that no Triton launch and no audited op
accounts for (CUDA only; inside the candidate's process, evidence only when it condemns).

One CUDA profiler session serves a whole check, collecting only inside checked calls. Why: the end of
a session tears CUPTI down (torch's default since 2.7) and the next start sets it up again for every
module loaded, which cost 1.46 s per start once cuDNN was loaded (an H200 convolution check: 11
sessions, 16 s of its 19 s in the runner). GPU collection is switched on for each checked call and off
between them (the documented `toggle_collection_dynamic`), so the harness's own kernels (state loads,
copies, output writes) never enter the list; each call runs inside a named range, so its kernels are
judged against what that call's audit accepted.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

TRITON_LABEL = "xe_forge.triton:"  # the range count_launches(label=True) opens around each Triton launch
CALL_LABEL = "xe_forge.call:"  # the range around one checked call
Accounts = dict[str, tuple[set[str], set[str]]]  # call tag -> (aten ops the audit accepted, Triton kernel names)


class KernelSession:
    """One profiler session across a check's calls; `finish` ends it and judges every call at once."""

    def __init__(self) -> None:
        self.prof: Any = None
        self.off = ""  # why the kernel list is off ("skipped: ..."), once a start failed
        self.accounts: Accounts = {}

    @contextlib.contextmanager
    def collect(self, tag: str) -> Iterator[str]:
        """Collection on for the body; yields "" or the reason there is no kernel list."""
        from torch.profiler import ProfilerActivity, profile, record_function

        if self.prof is None and not self.off:
            try:
                prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
                prof.__enter__()
                self.prof = prof
            except Exception as exc:  # no CUPTI, or a profiler already running
                self.off = f"skipped: the profiler did not start ({type(exc).__name__})"
        elif self.prof is not None:
            self.prof.toggle_collection_dynamic(True, [ProfilerActivity.CUDA])
        if self.prof is None:
            yield self.off
            return
        try:
            with record_function(CALL_LABEL + tag):
                yield ""
        finally:
            self.prof.toggle_collection_dynamic(False, [ProfilerActivity.CUDA])

    def account(self, tag: str, ok_ops: Iterable[str], triton_names: Iterable[str]) -> None:
        self.accounts[tag] = (set(ok_ops), set(triton_names))

    def finish(self) -> tuple[str, dict[str, list[str]]]:
        """End the session: ("checked", foreign kernels by call tag), or the reason it is off."""
        prof, accounts, off = self.prof, self.accounts, self.off
        self.prof, self.accounts, self.off = None, {}, ""
        if prof is None:
            return off, {}
        prof.__exit__(None, None, None)
        return "checked", foreign_kernels(prof.events(), accounts)


def foreign_kernels(events: Iterable[Any], accounts: Accounts) -> dict[str, list[str]]:
    """GPU kernels launched under neither a Triton launch nor a torch op its call's audit accepted, by
    call tag. A kernel on the device timeline whose launch the profiler did not link to a CPU event
    (tag "") counts unless some call accounted for a kernel of that name."""
    every_ok = set().union(*(ok for ok, _ in accounts.values()))
    every_triton = set().union(*(names for _, names in accounts.values()))
    accounted: dict[str, set[str]] = defaultdict(set)
    launched: dict[str, set[str]] = defaultdict(set)
    for evt in events:
        tag = _call_of(evt)
        ok = accounts[tag][0] if tag in accounts else every_ok
        for kernel in getattr(evt, "kernels", []):
            (accounted if _accounted(evt, ok) else launched)[tag].add(kernel.name)
        if _is_device_kernel(evt):
            launched[""].add(evt.name)
    anywhere = set().union(*accounted.values())
    out: dict[str, list[str]] = {}
    for tag, names in launched.items():
        triton = accounts[tag][1] if tag in accounts else every_triton
        excused = accounted[tag] | (anywhere if tag == "" else set())
        left = sorted(k for k in names - excused if not any(k == t or k.startswith(t + "_") for t in triton))
        if left:
            out[tag] = left
    return out


def _call_of(evt: Any) -> str:
    """The tag of the checked call whose range encloses the event ("" if none does)."""
    owner = evt
    while owner is not None:
        if owner.name.startswith(CALL_LABEL):
            return owner.name[len(CALL_LABEL):]
        owner = owner.cpu_parent
    return ""


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
