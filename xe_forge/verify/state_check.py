"""State after every call, compared elementwise with the reference's own state after the same call.

A kernel may keep the output right while leaving its module wrong: re-packing its own weight in
place (the next `state_dict()` a user saves is scrambled), or skipping the running-statistics
update a training-mode BatchNorm does. So after every checked call the candidate's process sends
each state entry (paired with the reference's names) the way it sends outputs (a file, or CUDA
IPC of a copy), and the reference process compares it element by element with its own model's
state after its own call on the same inputs, at the output tolerance. (A fingerprint did this
before: four sums with position weights that repeated every 1021 elements, so swapping two
1021-element blocks of a weight matched exactly, and its bounds were the tolerance summed over the
tensor, which a concentrated change hid under: red team 2, root cause 8.)
"""

from __future__ import annotations

from typing import Any

from xe_forge.verify.models import Finding


def state_path(output: str) -> str:
    """Where a call's state entries travel, beside its outputs."""
    return output + ".state"


def state_entries(model: Any, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """The candidate's state after a call, by the reference's names, read from nn.Module's own dicts (no
    method of the candidate's runs: model_walk), detached by torch's own detach."""
    import torch

    from xe_forge.verify.model_walk import named_state

    own = named_state(model)
    return {ref: torch.Tensor.detach(own[cand]) for ref, cand in sorted(pairs)
            if cand in own and torch.is_tensor(own[cand])}


def write_state(model: Any, pairs: list[tuple[str, str]], output: str, *, ipc: bool) -> dict[str, list[float]]:
    """Send the state entries (copies on a GPU: IPC maps memory, and the next call may change it) and
    return their names with their sizes, which the judge reads them by."""
    from xe_forge.verify.transport import write_outputs

    entries = state_entries(model, pairs)
    values = [v.clone() if ipc else v for v in entries.values()]
    write_outputs(values, state_path(output), ipc=ipc)
    return {name: [float(v.numel())] for name, v in entries.items()}


def same_state(got: Any, want: Any, rtol: float, atol: float) -> bool:
    """Elementwise within the tolerance (floats; NaN and Inf where the reference has them), exact otherwise."""
    import torch

    if not torch.is_tensor(got) or tuple(got.shape) != tuple(want.shape):
        return False
    if not want.is_floating_point():
        return got.dtype == want.dtype and bool(torch.equal(got.to(want.device), want))
    if not got.is_floating_point():
        return False
    g, w = got.to(device=want.device, dtype=torch.float64), want.to(torch.float64)
    return bool(torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True).all())


class Expected:
    """The reference's state after its call, the state as loaded before it, and which entries are buffers."""

    def __init__(self, after: dict[str, Any], loaded: dict[str, Any], buffers: set[str], rtol: float,
                 atol: float) -> None:
        import torch

        self.after = {k: v.detach().clone() for k, v in after.items() if torch.is_tensor(v)}
        self.loaded = {k: v for k, v in loaded.items() if torch.is_tensor(v)}
        self.buffers = buffers
        self.rtol, self.atol = rtol, atol


def state_findings(got: dict[str, Any], want: Expected | None, where: str) -> tuple[list[Finding], list[str]]:
    """Findings for state entries whose value after the call differs from the reference's own. A buffer the
    reference updates and the candidate leaves as loaded (running statistics a port does not track) fails
    too, with its own message: the output of that call is right, the module after it is not (a later
    eval() reads the statistics, and a skipped update is work not done)."""
    if want is None:
        return [], []
    bad, untracked = [], []
    for name, value in sorted(got.items()):
        if name not in want.after or same_state(value, want.after[name], want.rtol, want.atol):
            continue
        if name in want.buffers and name in want.loaded and same_state(value, want.loaded[name], want.rtol,
                                                                       want.atol):
            untracked.append(f"`{name}`")
        else:
            bad.append(f"`{name}`")
    out = []
    if untracked:
        out.append(Finding(check="state", message=f"after call {where}, the kernel leaves {', '.join(untracked[:5])} "
                           "as loaded where the reference updates it (running statistics not tracked)",
                           hint="update the buffers in the kernel (or in its launcher) as the reference does"))
    if bad:
        out.append(Finding(check="state", message=f"after call {where}, {', '.join(bad[:5])} differs from the "
                           "reference's own state after the same call (a weight changed in place, or a buffer "
                           "updated differently)",
                           hint="leave parameters as loaded (pack into a separate tensor), and update buffers as "
                                "the reference does"))
    return out, []


def sent_state_findings(names: dict[str, list[float]], output: str, want: Expected | None, where: str,
                        load: Any) -> tuple[list[Finding], list[str]]:
    """The state entries a call sent beside `output`, read like outputs (`load`: the judge's reader, which
    refuses anything but plain tensors of sane size), against the reference's own state."""
    if want is None:
        return [], []
    got = load(state_path(output), [want.after[n] for n in names if n in want.after])
    if isinstance(got, str) or len(got) != len(names):
        why = got if isinstance(got, str) else "a wrong count"
        return [Finding(check="state", message=f"after call {where}, the state entries cannot be read ({why})")], []
    return state_findings(dict(zip(sorted(names), got, strict=True)), want, where)
