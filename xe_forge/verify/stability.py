"""Whether the fp32 reference can judge a trial: finite, and close to the same reference in float64.

Wide inputs (large offsets, heavy tails) are where real models break naive kernels, but also where
a reference may lose digits itself; a candidate is then judged against rounding noise. So a wide
trial is used only where the fp32 reference agrees with its float64 run to a quarter of the
tolerance (an honest kernel with an error of the same size then stays within it); otherwise the
next smaller offset is tried.
"""

from __future__ import annotations

import copy
from typing import Any

from xe_forge.verify.compare import compare, flatten
from xe_forge.verify.model_walk import set_training

MARGIN = 4.0  # the fp32 reference must agree with float64 this much tighter than the tolerance


class Float64Reference:
    """A float64 twin of the reference model, built once per preparation."""

    def __init__(self, ref: Any) -> None:
        self.ref, self.model = ref, copy.deepcopy(ref).double()

    def outputs(self, state: dict[str, Any], args: list[Any]) -> list[Any]:
        import torch

        self.model.load_state_dict({k: (v.double() if v.is_floating_point() else v) for k, v in state.items()})
        set_training(self.model, self.ref.training)  # an eval-mode trial's twin runs in eval mode too
        wide_args = [x.double() if torch.is_tensor(x) and x.is_floating_point() else x for x in args]
        with torch.no_grad():
            # left on the reference's device: the comparison runs there (a copy to the host and a host
            # comparison cost ~1 s per check of a large GEMM on the H200)
            return [o.detach() if torch.is_tensor(o) else o for o in flatten(self.model(*wide_args))]


def stable(want: list[Any], twin: Float64Reference, state: dict[str, Any], args: list[Any], rtol: float,
           atol: float) -> bool:
    """The fp32 outputs `want` match the float64 reference within tolerance / MARGIN."""
    import torch

    try:
        exact = twin.outputs(state, args)
    except Exception:
        return False
    if len(exact) != len(want):
        return False
    for w, e in zip(want, exact, strict=True):
        if torch.is_tensor(w) and w.is_floating_point():
            if not compare("reference", w.double(), e, rtol / MARGIN, atol / MARGIN, None).passed:
                return False
    return True


JITTER = 1e-6  # relative: a few fp32 ulps, far below any tolerance


def jittered(args: list[Any], seed: int) -> list[Any]:
    """The inputs moved by a few ulps each (a fresh tensor: an expanded input's repeated rows now differ)."""
    import torch

    gens: dict[Any, Any] = {}  # drawn where the input lives: a host draw and copy cost 0.6 s per GEMM check

    def noise(x: Any) -> Any:
        if x.device not in gens:
            gens[x.device] = torch.Generator(device=x.device).manual_seed(seed)
        gen = gens[x.device]
        return torch.randn(x.shape, generator=gen, dtype=x.dtype, device=x.device)

    return [x * (1 + JITTER * noise(x)) if torch.is_tensor(x) and x.is_floating_point() else x for x in args]


def conditioned(want: list[Any], nearby: list[Any], rtol: float, atol: float) -> bool:
    """Whether the reference's outputs on inputs a few ulps away agree with `want` within tolerance / MARGIN.

    The float64 twin cannot see an ill-conditioned input where torch's algorithm happens to be exact
    (a batch variance of exactly 0 over repeated rows): there any honest kernel that rounds its mean
    differently is off by O(1), and the trial would judge rounding, not the kernel."""
    import torch

    if len(nearby) != len(want):
        return False
    return all(compare("reference", w.double(), n.double(), rtol / MARGIN, atol / MARGIN, None).passed
               for w, n in zip(want, nearby, strict=True) if torch.is_tensor(w) and w.is_floating_point())


def finite(outputs: list[Any]) -> bool:
    import torch

    return all(bool(torch.isfinite(o).all()) for o in outputs if torch.is_tensor(o) and o.is_floating_point())


def varies(outputs: list[Any]) -> bool:
    """No floating output of more than one element is one value throughout. A draw far from unit scale
    can saturate a reference (a sigmoid at exactly 1 before a logsumexp): its output is then a constant
    that a kernel writing it would match, so such a draw tells nothing and the next, milder one is tried."""
    import torch

    return not any(o.numel() > 1 and bool((o == o.flatten()[0]).all())
                   for o in outputs if torch.is_tensor(o) and o.is_floating_point())
