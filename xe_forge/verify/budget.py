"""The FLOP budget of allowed torch work: what the baseline itself does, per family of ops.

An allowance (`self.conv`, `F.conv2d`, an aten op) names work a kernel may keep in torch; it must
never become a way to run more. The budget is the baseline's own: the input kernel's allowed work
at the same shape where `optimize` has an input kernel apart from the candidate, else (`check`, or
an input kernel that is its own reference) the reference's own torch work, counted in the reference
process. FLOPs are compared per family (`gemm` for mm/addmm/linear/..., `conv` for every
convolution kernel, else the op), so a kept convolution never pays for a GEMM.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from xe_forge.verify.audit import _flops, _tensors, family, is_compute
from xe_forge.verify.models import AuditSummary, Finding

SLACK = 1.001  # float rounding of FLOP formulas between processes


@contextlib.contextmanager
def counted_families() -> Iterator[dict[str, float]]:
    """FLOPs per family of every compute op dispatched inside the block (the reference's forward)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    counts: dict[str, float] = {}

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = func._overloadpacket.__name__
            if is_compute(name, func):
                fam = family(name)
                tensors_in = _tensors(args) + _tensors(kwargs)
                counts[fam] = counts.get(fam, 0.0) + _flops(func, args, kwargs, out, tensors_in)
            return out

    with _Count():
        yield counts


def budget_findings(where: str, audit: AuditSummary, budget: dict[str, float], source: str) -> list[Finding]:
    """A finding per family whose allowed FLOPs exceed the baseline's."""
    out = []
    for fam, flops in sorted(audit.allowed_families.items()):
        cap = budget.get(fam, 0.0)
        if flops > cap * SLACK + 1.0:
            out.append(Finding(check="torch-budget", message=f"{where}: allowed torch ops ran {flops:.3g} FLOP of "
                               f"{fam} per call, {source} {cap:.3g}: an allowance admits only the work {source} "
                               "itself does in torch",
                               hint="compute the rest inside a @triton.jit kernel"))
    return out


def merge_families(audits: list[AuditSummary]) -> dict[str, float]:
    """The worst call's allowed FLOPs per family."""
    out: dict[str, float] = {}
    for a in audits:
        for fam, flops in a.allowed_families.items():
            out[fam] = max(out.get(fam, 0.0), flops)
    return out
