"""Weights for the trials: the reference's own initial ones, and the same moved off their initial value.

A trained model's norm affines are not (1, 0) and its `nn.Parameter(torch.ones(...))` scales are not
ones; at the initial weights a kernel that skips such work is exact. So besides the initial weights
every floating state entry is perturbed: positive tensors (scales, variances) multiplicatively, so
they stay positive; others by noise scaled to the tensor's own spread, with a floor of 1 for
constant tensors (a zero bias moves by about 0.5). The same state dict goes into the candidate.
"""

from __future__ import annotations

from typing import Any

POSITIVE_SIGMA = 0.5  # log-normal factor for positive tensors
ADDITIVE_SIGMA = 0.5  # in units of the tensor's spread
CONSTANT_SPREAD = 1.0  # the spread assumed for a constant tensor


def perturbed(state: dict[str, Any], seed: int) -> dict[str, Any]:
    """A copy of `state` with every floating, finite, non-empty entry moved off its value."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, t in state.items():
        if not torch.is_tensor(t) or not t.is_floating_point() or t.numel() == 0 or not bool(torch.isfinite(t).all()):
            out[name] = t
            continue
        noise = torch.randn(t.shape, generator=gen, dtype=torch.float32).to(device=t.device, dtype=t.dtype)
        if bool((t > 0).all()):
            out[name] = t * torch.exp(POSITIVE_SIGMA * noise)
        else:
            spread = float(t.float().std()) if t.numel() > 1 else 0.0
            if not spread > 0:
                spread = max(float(t.float().abs().mean()), CONSTANT_SPREAD)
            out[name] = t + ADDITIVE_SIGMA * spread * noise
    return out


def moved(state: dict[str, Any], other: dict[str, Any]) -> list[str]:
    import torch

    return [k for k, v in state.items() if torch.is_tensor(v) and not torch.equal(v, other[k])]


def with_one_moved(initial: dict[str, Any], moved_state: dict[str, Any], name: str) -> dict[str, Any]:
    """The initial state with only `name` taken from the perturbed one (naming the ignored parameter)."""
    return {k: (moved_state[k] if k == name else v) for k, v in initial.items()}


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


def load_into(model: Any, state: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """Copy the shipped state into the candidate in place (its own dtype and device)."""
    import torch

    own = model.state_dict(keep_vars=True)
    with torch.no_grad():
        for ref_name, cand_name in pairs:
            dst = own[cand_name]
            dst.copy_(state[ref_name].to(device=dst.device, dtype=dst.dtype))
