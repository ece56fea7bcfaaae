"""Weights for the trials: the reference's own initial ones, and the same moved off their initial value.

A trained model's norm affines are not (1, 0) and its `nn.Parameter(torch.ones(...))` scales are not
ones; at the initial weights a kernel that skips such work is exact. So besides the initial weights
every floating state entry is perturbed: positive tensors (scales, variances) multiplicatively and by a
positive additive part, so a tiny scale (LayerScale's 1e-5) moves by O(1); others by noise scaled to the tensor's own spread, with a floor of 1 for
constant tensors (a zero bias moves by about 0.5). With `signed`, a third of each positive tensor's
entries then flip sign (a trained LayerNorm's gamma has negative entries: a kernel using |gamma| is
exact on positive ones); the judge keeps that only where the reference stays finite and stable on it
(a running variance under a square root in eval mode stays positive). The same state dict goes into
the candidate.
"""

from __future__ import annotations

from typing import Any

POSITIVE_SIGMA = 0.5  # log-normal factor for positive tensors
POSITIVE_FLOOR = 0.1  # and a positive additive part (|normal| times this): small scales move by O(1)
ADDITIVE_SIGMA = 0.5  # in units of the tensor's spread
CONSTANT_SPREAD = 1.0  # the spread assumed for a constant tensor
SIGNED_FRACTION = 1 / 3  # of a positive tensor's entries flipped negative, with `signed`


def perturbed(state: dict[str, Any], seed: int, signed: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    """A copy of `state` with every floating, finite, non-empty entry moved off its value; the positive
    entries named in `signed` also with a third of their entries negative (the same draw otherwise)."""
    import torch

    streams: dict[Any, tuple[Any, Any]] = {}  # per device: drawn where the tensor lives (an H200 spent
    # 4.4 s of a 30 s check drawing a 67M-entry perturbation on the host and copying it over)

    def draws(device: Any) -> tuple[Any, Any]:
        if device not in streams:  # the signs in their own stream: the magnitudes do not change with them
            streams[device] = (torch.Generator(device=device).manual_seed(seed),
                               torch.Generator(device=device).manual_seed(seed ^ 0x5EED))
        return streams[device]

    out = {}
    for name, t in state.items():
        if not torch.is_tensor(t) or not t.is_floating_point() or t.numel() == 0 or not bool(torch.isfinite(t).all()):
            out[name] = t
            continue
        gen, signs = draws(t.device)
        noise = torch.randn(t.shape, generator=gen, dtype=torch.float32, device=t.device).to(t.dtype)
        if bool((t > 0).all()):
            # multiplicative, plus an additive part of O(1): a LayerScale gamma of 1e-5 stays 1e-5 under a factor
            # alone (a skipped branch stays within tolerance), and moves to about 0.1 with this
            lift = POSITIVE_FLOOR * torch.randn(t.shape, generator=gen, dtype=torch.float32, device=t.device).abs()
            out[name] = t * torch.exp(POSITIVE_SIGMA * noise) + lift.to(t.dtype)
            if name in signed:
                flip = torch.rand(t.shape, generator=signs, device=t.device) < SIGNED_FRACTION
                flip.view(-1)[0] = True  # at least one, so a scalar scale flips too
                out[name] = torch.where(flip, -out[name], out[name])
        else:
            spread = float(t.float().std()) if t.numel() > 1 else 0.0
            if not spread > 0:
                spread = max(float(t.float().abs().mean()), CONSTANT_SPREAD)
            out[name] = t + ADDITIVE_SIGMA * spread * noise
    return out


FLOAT_FACTORS = (1.2, 1.3, 1.4)  # literal float constructor arguments at unseen shapes, one factor for all


def varied_floats(init: list[Any], seed: int) -> list[Any]:
    """Constructor arguments with every literal float (a LeakyReLU slope, an eps, clamp bounds) times one
    factor drawn from `seed`; ints (shapes), bools and the rest unchanged. One positive factor keeps
    signs and order (min < max stays so); the reference defines the output at the new values."""
    factor = FLOAT_FACTORS[seed % len(FLOAT_FACTORS)]
    return [v * factor if type(v) is float else v for v in init]


def positive(state: dict[str, Any]) -> list[str]:
    """The floating entries `perturbed` keeps positive unless told to sign them."""
    import torch

    return [k for k, t in state.items() if torch.is_tensor(t) and t.is_floating_point() and t.numel() > 0
            and bool(torch.isfinite(t).all()) and bool((t > 0).all())]


def moved(state: dict[str, Any], other: dict[str, Any]) -> list[str]:
    import torch

    return [k for k, v in state.items() if torch.is_tensor(v) and not torch.equal(v, other[k])]


def with_one_moved(initial: dict[str, Any], moved_state: dict[str, Any], name: str) -> dict[str, Any]:
    """The initial state with only `name` taken from the perturbed one (naming the ignored parameter)."""
    return {k: (moved_state[k] if k == name else v) for k, v in initial.items()}


def interface_change(ref_sd: dict[str, Any], cand_sd: dict[str, Any]) -> str | None:
    """Why the candidate's state-dict keys are not the reference's, or None. They are the module's interface:
    a user's checkpoint of the reference must load into the candidate (strict `load_state_dict`) and one saved
    from the candidate into the reference; a missing or an extra persistent entry breaks both (red team 8,
    a44: an extra buffer the kernel reads). Non-persistent buffers are not in either."""
    missing, extra = [k for k in ref_sd if k not in cand_sd], [k for k in cand_sd if k not in ref_sd]
    if not missing and not extra:
        return None
    said = "; ".join(part for part in (
        f"missing {', '.join(f'`{k}`' for k in missing[:6])}" if missing else "",
        f"extra {', '.join(f'`{k}`' for k in extra[:6])}" if extra else "") if part)
    return (f"the model's state dict differs from the reference's ({said}): a checkpoint of the reference no "
            "longer loads into it, nor one of it into the reference (keep the reference's parameters and "
            "persistent buffers, by name; extra tensors are buffers registered with persistent=False)")


def pair_tensors(ref_sd: dict[str, Any], cand_sd: dict[str, Any]) -> list[tuple[str, str]]:
    """Match reference to candidate tensors by name and shape, then by order and shape."""
    pairs = [(n, n) for n, t in ref_sd.items() if n in cand_sd and tuple(cand_sd[n].shape) == tuple(t.shape)]
    used_ref, used_cand = {p[0] for p in pairs}, {p[1] for p in pairs}
    rest_cand = [n for n in cand_sd if n not in used_cand]
    for rname, rt in ref_sd.items():
        if rname in used_ref:
            continue
        match = next((c for c in rest_cand if tuple(cand_sd[c].shape) == tuple(rt.shape)), None)
        if match is not None:
            pairs.append((rname, match))
            rest_cand.remove(match)
    return pairs


ZERO_FRACTIONS = (0.1, 0.5)  # the share of a weight's entries a pruned state zeroes, drawn in this range


def pruned(state: dict[str, Any], seed: int, params: set[str]) -> dict[str, Any]:
    """A copy of `state` with exact zeros, as pruned and zero-initialised models have (red team 7, a147: a
    kernel read 0.0 weights as 0.5 and passed, no trial having a zero weight): each floating parameter
    of two or more entries has a secret share of them (ZERO_FRACTIONS) set to 0, and a parameter named
    like a bias is zero throughout with a secret coin per entry (a zero-initialised bias). Buffers
    (running statistics) keep their values. Drawn from `seed`, so a kernel cannot know which entries."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = dict(state)
    for name in sorted(state):
        t = state[name]
        if name not in params or not torch.is_tensor(t) or not t.is_floating_point() or t.numel() < 2:
            continue
        share = ZERO_FRACTIONS[0] + (ZERO_FRACTIONS[1] - ZERO_FRACTIONS[0]) * float(torch.rand(1, generator=gen))
        whole = name.rsplit(".", 1)[-1].startswith("bias") and bool(torch.rand(1, generator=gen) < 0.5)
        keep = torch.rand(t.shape, generator=gen) >= (1.0 if whole else share)
        out[name] = torch.where(keep.to(t.device), t, torch.zeros((), dtype=t.dtype, device=t.device))
    return out
