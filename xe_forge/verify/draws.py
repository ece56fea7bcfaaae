"""What a trial draws beyond the recipe: the reference built at moved float constructor arguments,
signed weights where the reference allows them, and the ladder of input distributions a trial steps
down until the fp32 reference can judge it (red team 2, root causes 3 and 6; docs/VERIFIER.md rule 7).

Kept apart from judge.py (which runs them) so each choice is one small, testable function.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from xe_forge.problem.cases import SCALES, WIDE_OFFSETS, model_class
from xe_forge.verify.weights import perturbed, positive, varied_floats

Attempt = tuple[str, float, "tuple[float, float] | None", float]  # (dist, wide offset, log10 spread, zeros)


def build_reference(module: ModuleType, init: list[Any], weight_seed: int, device: Any,
                    vary: bool) -> tuple[Any, list[Any]]:
    """The reference model and the constructor arguments it was built with: with `vary` (unseen shapes),
    its literal floats moved (weights.varied_floats) unless the reference refuses them."""
    if vary:
        varied = varied_floats(init, weight_seed)
        if varied != init:
            try:
                return _build(module, varied, weight_seed, device), varied
            except Exception:
                pass  # the reference refuses them: the literal values
    return _build(module, init, weight_seed, device), init


def _build(module: ModuleType, init: list[Any], weight_seed: int, device: Any) -> Any:
    import torch

    torch.manual_seed(weight_seed)
    with torch.device(device):  # parameters initialised where they live: seconds for 67M on a CPU
        return model_class(module)(*init).to(device)


def signed_state(initial: dict[str, Any], seed: int, params: set[str],
                 accepts: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """Perturbed weights with positive entries signed where `accepts` (the reference finite and stable on
    them) holds: every positive entry, else the parameters only (a running variance may need its sign),
    else none."""
    names = positive(initial)
    for signed in (set(names), {k for k in names if k in params}):
        if signed:
            moved = perturbed(initial, seed, signed)
            if accepts(moved):
                return moved
    return perturbed(initial, seed)


def attempts(dist: str, scale: str, seed: int = 0, zeros: float = 0.0) -> list[Attempt]:
    """The draws a trial tries in turn: wide ones with their hard slices, then plainer offsets, then signed;
    scaled signed ones down to unit scale; the problem's own inputs last. A wide trial's offset has a
    sign drawn from its secret seed (activations sit far below zero as often as above: a kernel right
    only for positive offsets fails half the checks), and the other sign is tried next where the
    reference refuses it (a log of the input). With `zeros`, the first draw has that share of exact zeros
    (cases.build_case), kept only where the reference stays finite and stable on them."""
    out: list[Attempt] = [(dist, WIDE_OFFSETS[0], None, 0.0)]
    if dist == "wide":
        sign = -1.0 if (seed >> 17) & 1 else 1.0
        out = [("hard", sign * WIDE_OFFSETS[0], None, 0.0), ("hard", -sign * WIDE_OFFSETS[0], None, 0.0)] \
            + [("wide", sign * o, None, 0.0) for o in WIDE_OFFSETS] + [("signed", 0.0, None, 0.0)]
    elif dist == "signed" and scale in SCALES:
        out = [("signed", 0.0, s, 0.0) for s in SCALES[scale]] + out
    if zeros > 0:
        out = [(out[0][0], out[0][1], out[0][2], zeros), *out]
    return [*out, ("problem", 0.0, None, 0.0)]
